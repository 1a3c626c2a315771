import { describe, expect, it } from 'vitest'
import { serviceNameOf, telemetryDefaults, telemetryEnabled, telemetryProblems } from './settings.js'

describe('telemetry settings', () => {
  it('when no OTLP endpoint is set, then telemetry is off', () => {
    expect(telemetryEnabled({})).toBe(false)
    expect(telemetryEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBe(false)
  })

  it('when an endpoint is set, then telemetry is on unless the SDK or the trace exporter is disabled', () => {
    expect(telemetryEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true)
    expect(telemetryEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(true)
    expect(
      telemetryEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }),
    ).toBe(false)
    expect(
      telemetryEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }),
    ).toBe(false)
  })

  it('when the entry point is a service server, then its folder names the service', () => {
    expect(serviceNameOf('/app/services/payment/dist/server.js')).toBe('payment')
    expect(serviceNameOf('/tmp/other.js')).toBeUndefined()
    expect(serviceNameOf(undefined)).toBeUndefined()
  })

  it('when metrics, logs and the service name are unset, then defaults fill them and set ones are kept', () => {
    expect(telemetryDefaults({}, '/app/services/order/dist/server.js')).toEqual({
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      OTEL_SERVICE_NAME: 'order',
    })
    expect(
      telemetryDefaults(
        { OTEL_METRICS_EXPORTER: 'otlp', OTEL_LOGS_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'x' },
        '/app/services/order/dist/server.js',
      ),
    ).toEqual({})
  })

  it('when an OTLP endpoint is malformed, then its problem is named without quoting the value', () => {
    expect(telemetryProblems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual([])
    expect(telemetryProblems({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toEqual([])
    const problems = telemetryProblems({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://u:S3cret@c:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://u:S3cret@c:99999/v1/traces',
    })
    expect(problems).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT: the scheme is ftp://, expected http:// or https://',
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the port is out of range: it must be a number from 1 to 65535',
    ])
  })
})
