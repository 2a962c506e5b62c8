// Package embedding turns text into vectors for semantic search: a
// WordPiece tokenizer read from a tokenizer.json, a BERT sentence encoder
// (all-MiniLM-L6-v2 and models of its shape) read from safetensors, and the
// matrix kernels it runs on, in Go assembly for amd64 with AVX2 and FMA
// beside a pure-Go fallback.
//
// It imports neither the compiler nor the query engine; both use it. Loading
// a package costs nothing until a model is opened, so the query binary pays
// for embeddings only when a search needs a vector.
package embedding
