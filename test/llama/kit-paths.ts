/** Where the llama lane's engine kit lives, and the file test/llama/prepare.ts writes when the kit and models are ready. */
import { fileURLToPath } from 'node:url'

export const KIT = fileURLToPath(new URL('./kit/', import.meta.url))
export const READY = fileURLToPath(new URL('./kit/.models/READY', import.meta.url))
