/** Markdown chunking for knowledge retrieval (pure; no I/O). */
export { chunkMarkdown, DEFAULT_TARGET_CHARS, type Chunk, type ChunkOptions } from './chunk.js';
