package knowledge

import "bytes"

// GeneratedMarker starts the first line of every file kbq context -o
// writes (an AGENTS.md for Codex, say): the build leaves such a context
// file out, since the knowledge it holds is indexed already and reading
// it as context would feed each run of kbq context on the last, and kbq
// context overwrites only a file that carries it.
const GeneratedMarker = "<!-- kbq:generated"

// GeneratedHeader is the line kbq context -o writes first.
const GeneratedHeader = GeneratedMarker + ": kbq context wrote this file from the knowledge in .kb/; edit that, and run kbq context again -->\n"

// IsGenerated reports whether data is a file kbq context -o wrote.
func IsGenerated(data []byte) bool {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	return bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte(GeneratedMarker))
}
