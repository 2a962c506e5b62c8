// Package answer is the floor under kbq's two front doors, the command
// line (internal/kbqcli) and the MCP and HTTP servers (internal/kbqserve):
// finding and opening the artifact a request means, rendering results in
// the shapes both promise, and recording what they hand out in the usage
// log. Neither front door imports the other.
package answer
