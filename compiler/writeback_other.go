//go:build !linux

package compiler

import (
	"io"
	"os"
)

// writeBack returns f: only Linux is asked to write a file back early.
func writeBack(f *os.File) io.Writer { return f }
