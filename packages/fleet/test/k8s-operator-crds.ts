/**
 * The spec fields of the operators' custom resources this project uses: the required ones and every
 * known one (a misspelt field is an error), per kind, with nested objects and the fields that take
 * one of a few values. Transcribed from the operators' CRDs (config/crd/bases/*.yaml of each
 * repository, at the commit named per kind); the CRDs themselves are not kept here. Renew it when an
 * operator's API version changes.
 */
export interface CrdFields {
  /** Where the fields were read. */
  source: string
  required: string[]
  known: string[]
  /**
   * Nested objects by dotted path below spec (`plugins[]`: each element of the array `plugins`): their
   * known fields, and the required ones.
   */
  nested?: Array<[path: string, known: string[], required?: string[]]>
  /** Fields (dotted paths below spec) that take one of these values. */
  enums?: Array<[path: string, values: string[]]>
}

/** The values at `path` below `spec` (`[]` fans out over an array); absent ones are left out. */
function valuesAt(spec: unknown, path: string): unknown[] {
  let values: unknown[] = [spec]
  for (const part of path.split('.')) {
    const each = part.endsWith('[]')
    const key = each ? part.slice(0, -2) : part
    values = values
      .map((v) => (v as Record<string, unknown> | undefined)?.[key])
      .filter((v) => v !== undefined)
      .flatMap((v) => (each && Array.isArray(v) ? (v as unknown[]) : [v]))
  }
  return values
}

/**
 * What is wrong with an operator resource's spec against its transcribed CRD: missing required
 * fields, fields the CRD does not know (at the spec level and in the nested objects listed), values
 * outside an enum. Each problem names the kind, the object and the path.
 */
export function crdProblems(crd: CrdFields, what: string, spec: Record<string, unknown>): string[] {
  const problems = [
    ...crd.required.filter((f) => !(f in spec)).map((f) => `${what}: spec.${f} is required`),
    ...Object.keys(spec)
      .filter((f) => !crd.known.includes(f))
      .map((f) => `${what}: spec.${f} is not a field of the CRD`),
  ]
  for (const [path, known, required = []] of crd.nested ?? []) {
    for (const value of valuesAt(spec, path)) {
      const fields = Object.keys(value as object)
      for (const f of fields.filter((f) => !known.includes(f)))
        problems.push(`${what}: spec.${path}.${f} is not a field of the CRD`)
      for (const f of required.filter((f) => !fields.includes(f)))
        problems.push(`${what}: spec.${path}.${f} is required`)
    }
  }
  for (const [path, allowed] of crd.enums ?? []) {
    for (const value of valuesAt(spec, path))
      if (!allowed.includes(String(value)))
        problems.push(`${what}: spec.${path} is ${String(value)}, not one of ${allowed.join(', ')}`)
  }
  return problems
}

/** The commit of rabbitmq/messaging-topology-operator its kinds were read at. */
const TOPOLOGY_OPERATOR = 'rabbitmq/messaging-topology-operator@e736e2d'

/** Permission and TopicPermission: the same fields, granting different `permissions` verbs. */
const permissionFields = (verbs: string[]): CrdFields => ({
  source: TOPOLOGY_OPERATOR,
  required: ['permissions', 'rabbitmqClusterReference', 'vhost'],
  known: ['permissions', 'rabbitmqClusterReference', 'user', 'userReference', 'vhost'],
  nested: [['permissions', verbs]],
})

export const OPERATOR_CRDS: Record<string, CrdFields> = {
  'rabbitmq.com/v1beta1/Binding': {
    source: TOPOLOGY_OPERATOR,
    required: ['rabbitmqClusterReference'],
    known: [
      'arguments',
      'destination',
      'destinationType',
      'rabbitmqClusterReference',
      'routingKey',
      'source',
      'vhost',
    ],
  },
  'rabbitmq.com/v1beta1/Exchange': {
    source: TOPOLOGY_OPERATOR,
    required: ['name', 'rabbitmqClusterReference'],
    known: ['arguments', 'autoDelete', 'durable', 'name', 'rabbitmqClusterReference', 'type', 'vhost'],
  },
  'rabbitmq.com/v1beta1/Permission': permissionFields(['configure', 'read', 'write']),
  'rabbitmq.com/v1beta1/Policy': {
    source: TOPOLOGY_OPERATOR,
    required: ['definition', 'name', 'pattern', 'rabbitmqClusterReference'],
    known: ['applyTo', 'definition', 'name', 'pattern', 'priority', 'rabbitmqClusterReference', 'vhost'],
    enums: [['applyTo', ['queues', 'classic_queues', 'quorum_queues', 'streams', 'exchanges', 'all']]],
  },
  'rabbitmq.com/v1beta1/Queue': {
    source: TOPOLOGY_OPERATOR,
    required: ['name', 'rabbitmqClusterReference'],
    known: [
      'arguments',
      'autoDelete',
      'deleteIfEmpty',
      'deleteIfUnused',
      'deletionPolicy',
      'durable',
      'name',
      'rabbitmqClusterReference',
      'type',
      'vhost',
    ],
  },
  'rabbitmq.com/v1beta1/TopicPermission': permissionFields(['exchange', 'read', 'write']),
  'rabbitmq.com/v1beta1/User': {
    source: TOPOLOGY_OPERATOR,
    required: ['rabbitmqClusterReference'],
    known: ['importCredentialsSecret', 'limits', 'rabbitmqClusterReference', 'tags'],
  },
  'rabbitmq.com/v1beta1/Vhost': {
    source: TOPOLOGY_OPERATOR,
    required: ['name', 'rabbitmqClusterReference'],
    known: [
      'defaultQueueType',
      'deletionPolicy',
      'limits',
      'name',
      'rabbitmqClusterReference',
      'tags',
      'tracing',
    ],
  },
  'postgresql.cnpg.io/v1/Cluster': {
    source: 'cloudnative-pg/cloudnative-pg@a95a534',
    required: ['instances'],
    known: [
      'affinity',
      'backup',
      'bootstrap',
      'certificates',
      'description',
      'enablePDB',
      'enableSuperuserAccess',
      'env',
      'envFrom',
      'ephemeralVolumeSource',
      'ephemeralVolumesSizeLimit',
      'externalClusters',
      'failoverDelay',
      'imageCatalogRef',
      'imageName',
      'imagePullPolicy',
      'imagePullSecrets',
      'inheritedMetadata',
      'instances',
      'livenessProbeTimeout',
      'logLevel',
      'managed',
      'maxSyncReplicas',
      'minSyncReplicas',
      'monitoring',
      'nodeMaintenanceWindow',
      'plugins',
      'podSecurityContext',
      'podSelectorRefs',
      'postgresGID',
      'postgresUID',
      'postgresql',
      'primaryLease',
      'primaryUpdateMethod',
      'primaryUpdateStrategy',
      'priorityClassName',
      'probes',
      'projectedVolumeTemplate',
      'replica',
      'replicationSlots',
      'resources',
      'schedulerName',
      'seccompProfile',
      'securityContext',
      'serviceAccountName',
      'serviceAccountTemplate',
      'smartShutdownTimeout',
      'startDelay',
      'stopDelay',
      'storage',
      'superuserSecret',
      'switchoverDelay',
      'tablespaces',
      'topologySpreadConstraints',
      'walStorage',
    ],
    nested: [
      ['bootstrap', ['initdb', 'pg_basebackup', 'recovery']],
      ['plugins[]', ['enabled', 'isWALArchiver', 'name', 'parameters'], ['name']],
      [
        'externalClusters[]',
        [
          'barmanObjectStore',
          'connectionParameters',
          'name',
          'password',
          'plugin',
          'sslCert',
          'sslKey',
          'sslRootCert',
        ],
        ['name'],
      ],
      [
        'bootstrap.recovery',
        ['backup', 'database', 'owner', 'recoveryTarget', 'secret', 'source', 'volumeSnapshots'],
      ],
      [
        'bootstrap.recovery.recoveryTarget',
        [
          'backupID',
          'exclusive',
          'targetImmediate',
          'targetLSN',
          'targetName',
          'targetTLI',
          'targetTime',
          'targetXID',
        ],
      ],
      [
        'bootstrap.initdb',
        [
          'builtinLocale',
          'dataChecksums',
          'database',
          'encoding',
          'icuLocale',
          'icuRules',
          'import',
          'locale',
          'localeCType',
          'localeCollate',
          'localeProvider',
          'options',
          'owner',
          'postInitApplicationSQL',
          'postInitApplicationSQLRefs',
          'postInitSQL',
          'postInitSQLRefs',
          'postInitTemplateSQL',
          'postInitTemplateSQLRefs',
          'secret',
          'walSegmentSize',
        ],
      ],
      ['storage', ['pvcTemplate', 'resizeInUseVolumes', 'size', 'storageClass']],
      [
        'postgresql',
        [
          'enableAlterSystem',
          'extensions',
          'ldap',
          'parameters',
          'pg_hba',
          'pg_ident',
          'promotionTimeout',
          'shared_preload_libraries',
          'syncReplicaElectionConstraint',
          'synchronous',
        ],
      ],
      [
        'monitoring',
        [
          'customQueriesConfigMap',
          'customQueriesSecret',
          'disableDefaultQueries',
          'enablePodMonitor',
          'metricsQueriesTTL',
          'podMonitorMetricRelabelings',
          'podMonitorRelabelings',
          'tls',
        ],
      ],
    ],
  },
  'rabbitmq.com/v1beta1/RabbitmqCluster': {
    source: 'rabbitmq/cluster-operator@06cda8e',
    required: [],
    known: [
      'affinity',
      'autoEnableAllFeatureFlags',
      'delayStartSeconds',
      'image',
      'imagePullSecrets',
      'override',
      'persistence',
      'rabbitmq',
      'replicas',
      'resources',
      'secretBackend',
      'service',
      'skipPostDeploySteps',
      'terminationGracePeriodSeconds',
      'tls',
      'tolerations',
    ],
    nested: [
      [
        'rabbitmq',
        ['additionalConfig', 'additionalPlugins', 'advancedConfig', 'envConfig', 'erlangInetConfig'],
      ],
      ['persistence', ['emptyDir', 'storage', 'storageClassName']],
    ],
  },
  'postgresql.cnpg.io/v1/ScheduledBackup': {
    source: 'cloudnative-pg/cloudnative-pg@a95a534',
    required: ['cluster', 'schedule'],
    known: [
      'backupOwnerReference',
      'cluster',
      'immediate',
      'method',
      'online',
      'onlineConfiguration',
      'pluginConfiguration',
      'schedule',
      'suspend',
      'target',
    ],
    nested: [
      ['cluster', ['name'], ['name']],
      ['pluginConfiguration', ['name', 'parameters'], ['name']],
    ],
    enums: [
      ['method', ['barmanObjectStore', 'volumeSnapshot', 'plugin']],
      ['target', ['primary', 'prefer-standby']],
      ['backupOwnerReference', ['none', 'self', 'cluster']],
    ],
  },
  'barmancloud.cnpg.io/v1/ObjectStore': {
    source: 'cloudnative-pg/plugin-barman-cloud@9967e2c',
    required: ['configuration'],
    known: ['configuration', 'instanceSidecarConfiguration', 'retentionPolicy'],
    nested: [
      [
        'configuration',
        [
          'azureCredentials',
          'data',
          'destinationPath',
          'endpointCA',
          'endpointURL',
          'googleCredentials',
          'historyTags',
          's3Credentials',
          'serverName',
          'tags',
          'wal',
        ],
        ['destinationPath'],
      ],
      [
        'configuration.s3Credentials',
        ['accessKeyId', 'inheritFromIAMRole', 'region', 'secretAccessKey', 'sessionToken'],
      ],
      ['configuration.s3Credentials.accessKeyId', ['key', 'name'], ['key', 'name']],
      ['configuration.s3Credentials.secretAccessKey', ['key', 'name'], ['key', 'name']],
      [
        'configuration.wal',
        [
          'archiveAdditionalCommandArgs',
          'compression',
          'encryption',
          'maxParallel',
          'restoreAdditionalCommandArgs',
        ],
      ],
      [
        'configuration.data',
        [
          'additionalCommandArgs',
          'compression',
          'encryption',
          'immediateCheckpoint',
          'jobs',
          'restoreAdditionalCommandArgs',
        ],
      ],
    ],
    enums: [
      ['configuration.wal.compression', ['bzip2', 'gzip', 'lz4', 'snappy', 'xz', 'zstd']],
      ['configuration.data.compression', ['bzip2', 'gzip', 'lz4', 'snappy']],
    ],
  },
}
