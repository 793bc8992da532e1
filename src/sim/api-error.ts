/**
 * Errors the simulator answers with, in the JSON shape vLLM's OpenAI server
 * uses: {object: "error", message, type, param, code}.
 */

const TYPES: Record<number, string> = {
  400: 'BadRequestError',
  404: 'NotFoundError',
  405: 'MethodNotAllowed',
  413: 'BadRequestError',
  429: 'TooManyRequestsError',
  500: 'InternalServerError',
}

/** A request the simulator refuses; `status` is the HTTP status to send. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message)
  }
}

/** The error object vLLM sends (also the payload of an in-stream error event). */
export function errorObject(status: number, message: string, param: string | null = null): Record<string, unknown> {
  return { object: 'error', message, type: TYPES[status] ?? 'InternalServerError', param, code: status }
}

/** The JSON body of an error response. */
export function errorBody(status: number, message: string, param: string | null = null): string {
  return JSON.stringify(errorObject(status, message, param))
}
