// Package render is where kbq's answers take their shapes, for every
// front door: search results, document listings and assembled context as
// terminal text, markdown, CSV, JSON and JSON lines, for the command line,
// the HTTP API and the MCP tools. Nothing else formats them; what a
// terminal could take for a control sequence is escaped here
// (internal/visible).
package render
