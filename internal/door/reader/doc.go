// Package reader is the one read path under kbq's front doors, the command
// line (internal/door/kbqcli) and the MCP and HTTP servers
// (internal/door/kbqserve): a Backend that searches, gets, lists,
// assembles context and counts, implemented by Artifacts for one artifact,
// several read as one, and the repositories of a PostgreSQL database;
// finding and opening what a request names (Sources, Open); embedding
// queries for the semantic channel (Embedder); and recording what the
// doors hand out in the usage log (Usage). It prints nothing: what a user
// should know comes back as notes, which each door says its own way.
package reader
