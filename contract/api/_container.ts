/**
 * The subset of core/v1 Container that an AppClusterBinding may override on the konnector
 * (field-for-field as in Kubernetes 1.31 core/v1, which Klutch's CRD embeds).
 */
import { arr, bool, int, intOrString, map, obj, quantity, str, type TypeOf } from './_schema.js';

const strList = () => arr(str(), { listType: 'atomic' });
const optionalRef = (what: string) =>
  obj(
    { name: str({ default: '', description: `Name of the ${what}.` }), optional: bool({ description: `Whether the ${what} may be missing.` }) },
    { mapType: 'atomic' },
  );
const keyRef = (what: string) =>
  obj(
    {
      key: str({ description: `Key in the ${what}.` }),
      name: str({ default: '', description: `Name of the ${what}.` }),
      optional: bool({ description: `Whether the ${what} or key may be missing.` }),
    },
    { required: ['key'], mapType: 'atomic' },
  );

export const envVarSchema = obj(
  {
    name: str({ description: 'Variable name.' }),
    value: str({ description: 'Literal value.' }),
    valueFrom: obj({
      configMapKeyRef: keyRef('ConfigMap'),
      secretKeyRef: keyRef('Secret'),
      fieldRef: obj({ apiVersion: str(), fieldPath: str({ description: 'Field of the pod (downward API).' }) }, { required: ['fieldPath'], mapType: 'atomic' }),
      resourceFieldRef: obj(
        { containerName: str(), divisor: quantity(), resource: str({ description: 'Resource, e.g. limits.cpu.' }) },
        { required: ['resource'], mapType: 'atomic' },
      ),
    }),
  },
  { required: ['name'] },
);
export type EnvVar = TypeOf<typeof envVarSchema>;

export const envFromSourceSchema = obj({
  configMapRef: optionalRef('ConfigMap'),
  prefix: str({ description: 'Prefix of every variable name.' }),
  secretRef: optionalRef('Secret'),
});
export type EnvFromSource = TypeOf<typeof envFromSourceSchema>;

const port = () => intOrString({ description: 'Port number or name.' });
const httpGet = () =>
  obj(
    {
      host: str(),
      httpHeaders: arr(obj({ name: str(), value: str() }, { required: ['name', 'value'] }), { listType: 'atomic' }),
      path: str(),
      port: port(),
      scheme: str(),
    },
    { required: ['port'] },
  );
const tcpSocket = () => obj({ host: str(), port: port() }, { required: ['port'] });
const exec = () => obj({ command: strList() });

const handler = () =>
  obj({
    exec: exec(),
    httpGet: httpGet(),
    sleep: obj({ seconds: int({ format: 'int64' }) }, { required: ['seconds'] }),
    tcpSocket: tcpSocket(),
  });

export const probeSchema = obj({
  exec: exec(),
  failureThreshold: int({ format: 'int32' }),
  grpc: obj({ port: int({ format: 'int32' }), service: str({ default: '' }) }, { required: ['port'] }),
  httpGet: httpGet(),
  initialDelaySeconds: int({ format: 'int32' }),
  periodSeconds: int({ format: 'int32' }),
  successThreshold: int({ format: 'int32' }),
  tcpSocket: tcpSocket(),
  terminationGracePeriodSeconds: int({ format: 'int64' }),
  timeoutSeconds: int({ format: 'int32' }),
});
export type Probe = TypeOf<typeof probeSchema>;

export const resourceRequirementsSchema = obj({
  claims: arr(obj({ name: str(), request: str() }, { required: ['name'] }), { listType: 'map', listMapKeys: ['name'] }),
  limits: map(quantity(), { description: 'Maximum resources.' }),
  requests: map(quantity(), { description: 'Minimum resources.' }),
});
export type ResourceRequirements = TypeOf<typeof resourceRequirementsSchema>;

const profile = () => obj({ localhostProfile: str(), type: str() }, { required: ['type'] });
export const securityContextSchema = obj({
  allowPrivilegeEscalation: bool(),
  appArmorProfile: profile(),
  capabilities: obj({ add: strList(), drop: strList() }),
  privileged: bool(),
  procMount: str(),
  readOnlyRootFilesystem: bool(),
  runAsGroup: int({ format: 'int64' }),
  runAsNonRoot: bool(),
  runAsUser: int({ format: 'int64' }),
  seLinuxOptions: obj({ level: str(), role: str(), type: str(), user: str() }),
  seccompProfile: profile(),
  windowsOptions: obj({ gmsaCredentialSpec: str(), gmsaCredentialSpecName: str(), hostProcess: bool(), runAsUserName: str() }),
});
export type SecurityContext = TypeOf<typeof securityContextSchema>;

export const containerPortSchema = obj(
  {
    containerPort: int({ format: 'int32' }),
    hostIP: str(),
    hostPort: int({ format: 'int32' }),
    name: str(),
    protocol: str({ default: 'TCP' }),
  },
  { required: ['containerPort'] },
);

export const volumeMountSchema = obj(
  {
    mountPath: str(),
    mountPropagation: str(),
    name: str(),
    readOnly: bool(),
    recursiveReadOnly: str(),
    subPath: str(),
    subPathExpr: str(),
  },
  { required: ['mountPath', 'name'] },
);

/** Container fields applied to the konnector container by strategic merge. */
export const containerOverridesSchema = obj(
  {
    args: strList(),
    command: strList(),
    env: arr(envVarSchema),
    envFrom: arr(envFromSourceSchema, { listType: 'atomic' }),
    image: str({ description: 'Konnector image.' }),
    imagePullPolicy: str(),
    lifecycle: obj({ postStart: handler(), preStop: handler() }),
    livenessProbe: probeSchema,
    name: str(),
    ports: arr(containerPortSchema, { listType: 'map', listMapKeys: ['containerPort', 'protocol'] }),
    readinessProbe: probeSchema,
    resources: resourceRequirementsSchema,
    restartPolicy: str(),
    securityContext: securityContextSchema,
    startupProbe: probeSchema,
    stdin: bool(),
    stdinOnce: bool(),
    terminationMessagePath: str(),
    terminationMessagePolicy: str(),
    tty: bool(),
    volumeDevices: arr(obj({ devicePath: str(), name: str() }, { required: ['devicePath', 'name'] })),
    volumeMounts: arr(volumeMountSchema),
    workingDir: str(),
  },
  { description: 'Overrides of the konnector container, merged strategically into the default container.' },
);
export type ContainerOverrides = TypeOf<typeof containerOverridesSchema>;
