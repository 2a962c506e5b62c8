// Package plainread opens and reads regular files with the fewest system
// calls the system allows.
//
// On Linux, os.Open tries to register every file it opens with the
// runtime's poller: it switches a regular file to non-blocking mode, is
// refused by epoll, and switches it back, five system calls that change
// nothing. A build opens every knowledge file and a fresh search five
// artifact files; here a file is opened with one call and read with
// plain reads.
package plainread
