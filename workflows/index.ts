// Every workflow the workers register. Workflow code is deterministic: all I/O lives in activities/.
export { ping } from './ping.js';
