//go:build !unix

package cli

import "os"

// terminalWidth is 0 where kbq does not ask the terminal its size.
func terminalWidth(*os.File) int { return 0 }
