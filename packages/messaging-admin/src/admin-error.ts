/**
 * An admin request that cannot be served: `statusCode` 404 (unknown queue), 409 (the handler queue
 * to requeue into does not exist), 503 (broker down); a
 * fastify app's error handler renders it. `details` name the part of the request at fault.
 */
export class MessagingAdminError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly details: Array<{ path: string; issue: string }> = [],
  ) {
    super(message)
    this.name = 'MessagingAdminError'
  }
}
