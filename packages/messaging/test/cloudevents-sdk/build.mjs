// Reads [{ type, source, data, subject? }] on stdin, builds each as a CloudEvent with the SDK's
// defaults (no extension attributes: no correlationid, and whatever datacontenttype the SDK sets or
// leaves out) and prints each in both content modes as the SDK writes them: structured
// (HTTP.structured: a content type and the envelope) and binary (HTTP.binary: `ce-` headers, a
// content type and the data). The SDK has no AMQP binding; a bridge carries these as AMQP
// properties and headers, as test/cloudevents.int.test.ts does.
import { readFileSync } from 'node:fs'
import { CloudEvent, HTTP } from 'cloudevents'

const inputs = JSON.parse(readFileSync(0, 'utf8'))
const built = inputs.map((input) => {
  const event = new CloudEvent(input)
  return { id: event.id, structured: HTTP.structured(event), binary: HTTP.binary(event) }
})
process.stdout.write(JSON.stringify(built))
