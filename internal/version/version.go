// Package version holds the release version of kbc and kbq.
package version

// Version is the release of both binaries. Bump it whenever the compiler
// turns the same documents into different index contents: it is part of
// the content key that decides whether an index can be reused.
const Version = "0.1.2"
