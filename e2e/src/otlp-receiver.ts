import http from 'node:http'
import net from 'node:net'

/** One span as the receiver keeps it (ids are lower-case hex, as OTLP/JSON encodes them). */
export interface ReceivedSpan {
  service: string
  traceId: string
  spanId: string
  /** Empty for a root span. */
  parentSpanId: string
  name: string
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number
  attributes: Record<string, string | number | boolean>
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: number
  /** The span contexts this span links to (a batch span links each message it processed). */
  links: { traceId: string; spanId: string; attributes: Record<string, string | number | boolean> }[]
}

/** OTLP span kinds (opentelemetry-proto trace.proto). */
export const SpanKind = { server: 2, producer: 4, consumer: 5 } as const

// The OTLP/JSON shapes read here (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding).
interface AnyValue {
  stringValue?: string
  intValue?: string | number
  boolValue?: boolean
  doubleValue?: number
}
interface KeyValue {
  key: string
  value?: AnyValue
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] }
    scopeSpans?: {
      spans?: {
        traceId: string
        spanId: string
        parentSpanId?: string
        name: string
        kind?: number
        attributes?: KeyValue[]
        status?: { code?: number }
        links?: { traceId: string; spanId: string; attributes?: KeyValue[] }[]
      }[]
    }[]
  }[]
}

const valueOf = (v: AnyValue | undefined): string | number | boolean =>
  v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : (v?.boolValue ?? v?.doubleValue ?? ''))

const attributesOf = (list: KeyValue[] | undefined): Record<string, string | number | boolean> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]))

/** Appends the spans of one OTLP/JSON export request to `spans`. */
function add(spans: ReceivedSpan[], request: ExportRequest): void {
  for (const resourceSpans of request.resourceSpans ?? []) {
    const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '')
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        spans.push({
          service,
          traceId: span.traceId.toLowerCase(),
          spanId: span.spanId.toLowerCase(),
          parentSpanId: (span.parentSpanId ?? '').toLowerCase(),
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributesOf(span.attributes),
          status: span.status?.code ?? 0,
          links: (span.links ?? []).map((link) => ({
            traceId: link.traceId.toLowerCase(),
            spanId: link.spanId.toLowerCase(),
            attributes: attributesOf(link.attributes),
          })),
        })
      }
    }
  }
}

/**
 * An in-process OTLP/HTTP trace receiver for `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`: accepts
 * `POST /v1/traces`, answers 200 `{}`, and keeps every span it was sent. Anything else is 404;
 * a body that is not JSON is 400 (the exporter then drops the batch, as it would with a collector).
 */
export class OtlpReceiver {
  private constructor(
    /** Every span received, in arrival order. */
    readonly spans: ReceivedSpan[],
    private readonly server: http.Server,
    /** e.g. `http://127.0.0.1:40123`, for OTEL_EXPORTER_OTLP_ENDPOINT. */
    readonly endpoint: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const spans: ReceivedSpan[] = []
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end()
          return
        }
        try {
          add(spans, JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest)
        } catch {
          res.writeHead(400).end()
          return
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as net.AddressInfo
    return new OtlpReceiver(spans, server, `http://127.0.0.1:${port}`)
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId)
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

/**
 * A TCP endpoint that accepts connections and never answers: the worst exporter target (a hung
 * collector), since every export waits for its timeout. For the "exporter down" test.
 */
export async function blackHole(): Promise<{ endpoint: string; stop: () => Promise<void> }> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('error', () => undefined)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
