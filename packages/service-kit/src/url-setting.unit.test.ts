import { describe, expect, it } from 'vitest'
import { AMQP_URL_RULE, POSTGRES_URL_RULE, urlSettingProblem } from './url-setting.js'

const SECRET = 'S3cretPass'

describe('urlSettingProblem', () => {
  it.each([
    ['postgresql://u:S3cretPass@127.0.0.1:5432/db'],
    ['postgres://u:S3cretPass@db.internal/db?sslmode=verify-full'],
    ['postgresql://postgres@127.0.0.1/postgres?sslmode=disable'],
  ])('when DATABASE_URL is %s, then it is accepted', (value) => {
    expect(urlSettingProblem(value, POSTGRES_URL_RULE)).toBeUndefined()
  })

  it.each([
    [
      'postgresql://u:S3cretPass@127.0.0.1:99999/db',
      'the port is out of range: it must be a number from 1 to 65535',
    ],
    ['postgresql://u:S3cretPass@127.0.0.1:abc/db', 'the port is not a number from 1 to 65535'],
    [
      'mysql://u:S3cretPass@127.0.0.1:3306/db',
      'the scheme is mysql://, expected postgresql:// or postgres://',
    ],
    ['http://u:S3cretPass@127.0.0.1:5432/db', 'the scheme is http://, expected postgresql:// or postgres://'],
    [
      'u:S3cretPass@127.0.0.1:5432/db',
      'is not a URL: expected postgresql://user:password@host:5432/database',
    ],
    ['postgresql://u:S3cret#Pass@127.0.0.1/db', 'is not a valid URL: check the host and port'],
    [
      'postgresql://u:S3cretPass@127.0.0.1/db?sslmode=bogus',
      'sslmode "bogus" is not one of disable, allow, prefer, require, verify-ca, verify-full',
    ],
  ])('when DATABASE_URL is %s, then the problem is "%s" and the password is not quoted', (value, problem) => {
    const found = urlSettingProblem(value, POSTGRES_URL_RULE)
    expect(found).toContain(problem)
    expect(found).not.toContain(SECRET)
    expect(found).not.toContain('S3cret')
  })

  it.each([
    ['amqp://u:S3cretPass@127.0.0.1:99999', 'the port is out of range'],
    ['amqp://u:S3cretPass@127.0.0.1:five', 'the port is not a number'],
    ['http://u:S3cretPass@127.0.0.1:5672', 'the scheme is http://, expected amqp:// or amqps://'],
    ['amqp://u:S3cretPass@:5672', 'is not a valid URL: check the host and port'],
  ])('when AMQP_URL is %s, then the problem is "%s" and the password is not quoted', (value, problem) => {
    const found = urlSettingProblem(value, AMQP_URL_RULE)
    expect(found).toContain(problem)
    expect(found).not.toContain('S3cret')
  })

  const node = (n: number) => `amqp://u:S3cretPass@rabbit-${n}:5672`

  it.each([
    [`${node(1)},${node(2)},${node(3)}`],
    [` ${node(1)} ,\t${node(2)}, amqps://u:S3cretPass@rabbit-3/vh `],
    [`  ${node(1)}  `],
  ])('when AMQP_URL lists the nodes of a cluster (%j), then it is accepted', (value) => {
    expect(urlSettingProblem(value, AMQP_URL_RULE)).toBeUndefined()
  })

  it.each([
    [`${node(1)},,${node(3)}`, 'URL 2 of 3 is empty'],
    [`${node(1)},`, 'URL 2 of 2 is empty'],
    [',', 'URL 1 of 2 is empty; URL 2 of 2 is empty'],
    [
      `${node(1)},http://u:S3cretPass@rabbit-2:5672`,
      'URL 2 of 2: the scheme is http://, expected amqp:// or amqps://',
    ],
    [`${node(1)}, amqp://u:S3cretPass@rabbit-2:99999`, 'URL 2 of 2: the port is out of range'],
    [
      `amqp://u:S3cret,Pass@rabbit-1:5672`,
      'URL 2 of 2 is not a URL: expected amqp://user:password@host:5672/vhost',
    ],
  ])(
    'when AMQP_URL is the list %j, then the problem names the entry ("%s") and quotes no password',
    (value, problem) => {
      const found = urlSettingProblem(value, AMQP_URL_RULE)
      expect(found).toContain(problem)
      expect(found).not.toContain('S3cret')
      expect(found).not.toContain('rabbit-')
    },
  )

  it('when a list entry has no scheme, then the problem suggests the comma in a password was not encoded', () => {
    expect(urlSettingProblem('amqp://u:S3cret,Pass@rabbit-1:5672', AMQP_URL_RULE)).toContain(
      '(write a comma in a password as %2C)',
    )
    expect(urlSettingProblem('amqp://u:S3cret%2CPass@rabbit-1:5672', AMQP_URL_RULE)).toBeUndefined()
  })

  it('when a setting is not a list, then a comma is not a separator (DATABASE_URL is one URL)', () => {
    expect(urlSettingProblem('postgresql://u:a,b@db/x', POSTGRES_URL_RULE)).toBeUndefined()
  })
})
