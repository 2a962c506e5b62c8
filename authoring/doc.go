// Package authoring writes knowledge into a working tree: memories
// (Remember, Forget) and topics (WriteTopic), for kbc's remember and forget
// commands and its writing MCP server. Every file is validated as the
// compiler would before it lands, written atomically, and never through a
// symbolic link; concurrent writers take turns. It never commits, and it
// leaves building the artifact to the compiler.
package authoring
