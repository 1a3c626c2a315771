// Reads [{ contentType, body }] on stdin, parses each with the CloudEvents SDK's structured-mode
// reader (HTTP.toEvent with the message's content type as the content-type header; the SDK has no
// AMQP binding, and the AMQP binding's structured mode carries the same two things) and prints the
// events' attributes as JSON. An SDK error exits non-zero with the error on stderr.
import { readFileSync } from 'node:fs'
import { HTTP } from 'cloudevents'

const messages = JSON.parse(readFileSync(0, 'utf8'))
const events = messages.map(({ contentType, body }) => {
  const event = HTTP.toEvent({ headers: { 'content-type': contentType }, body })
  return { ...event.toJSON() }
})
process.stdout.write(JSON.stringify(events))
