/** A key of a Secret in a namespace. */
export interface SecretKeyRef {
  /** Namespace of the Secret. */
  readonly namespace: string;
  /** Name of the Secret. */
  readonly name: string;
  /** Key within the Secret. */
  readonly key: string;
}
