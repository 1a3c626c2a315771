import { AMQP_URL, TcpProxy } from '@saga/testkit'

/** A TCP proxy in front of the test broker, for delaying or cutting a client's link; close it after. */
export function brokerProxy(): Promise<TcpProxy> {
  return TcpProxy.start('127.0.0.1', Number(new URL(AMQP_URL).port || 5672))
}
