/**
 * Stands in for `@aws-sdk/credential-provider-node` in Lambda bundles (infra/bundling.ts
 * aliases it): Lambda always hands a function its role's credentials in the environment, so
 * the SDK's whole default chain (SSO, INI files, processes, web identity, instance metadata)
 * is dead weight at every cold start. Local tools run unbundled and keep the full chain.
 */
export { fromEnv as defaultProvider } from "@aws-sdk/credential-provider-env";
