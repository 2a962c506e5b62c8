// Package mmap maps files read-only into memory, where the system can, and
// reads them whole where it cannot.
package mmap
