// Drives nuv's Azure emulator with Azure's JavaScript SDK, configured as a client of a custom
// cloud is: from the cloud's metadata document (/metadata/endpoints?api-version=2022-09-01, what
// `az cloud register --endpoint-resource-manager` reads). Prints one JSON object of what it saw;
// any unexpected failure exits non-zero. Environment: EMULATOR_URL, AZURE_TENANT_ID,
// AZURE_CLIENT_ID, AZURE_CLIENT_SECRET, AZURE_SUBSCRIPTION_ID; NODE_EXTRA_CA_CERTS names the
// emulator's CA.
"use strict";
const { ClientSecretCredential } = require("@azure/identity");
const { ResourceManagementClient } = require("@azure/arm-resources");
const { ContainerServiceClient } = require("@azure/arm-containerservice");

async function main() {
  const env = process.env;
  const res = await fetch(env.EMULATOR_URL + "/metadata/endpoints?api-version=2022-09-01");
  if (res.status !== 200) throw new Error("metadata: " + res.status);
  const md = await res.json();
  const cred = new ClientSecretCredential(env.AZURE_TENANT_ID, env.AZURE_CLIENT_ID, env.AZURE_CLIENT_SECRET, {
    authorityHost: md.authentication.loginEndpoint,
    disableInstanceDiscovery: true,
  });
  const scope = md.authentication.audiences[0].replace(/\/$/, "") + "/.default";
  const opts = { endpoint: md.resourceManager, credentials: { scopes: [scope] } };
  const rm = new ResourceManagementClient(cred, env.AZURE_SUBSCRIPTION_ID, opts);
  const cs = new ContainerServiceClient(cred, env.AZURE_SUBSCRIPTION_ID, opts);
  const out = { cloud: md.name };

  const g = await rm.resourceGroups.createOrUpdate("js-rg", { location: "West Europe", tags: { by: "js" } });
  out.group = { name: g.name, location: g.location, state: g.properties && g.properties.provisioningState, tag: g.tags && g.tags.by };
  out.groups = [];
  for await (const x of rm.resourceGroups.list()) out.groups.push(x.name);

  const v = await cs.managedClusters.listKubernetesVersions("westeurope");
  out.kubernetesVersions = (v.values || []).map((x) => x.version);
  out.clusters = [];
  for await (const c of cs.managedClusters.listByResourceGroup("js-rg")) out.clusters.push(c.name);
  try {
    await cs.managedClusters.get("js-rg", "absent");
    out.getAbsent = "no error";
  } catch (e) {
    out.getAbsent = { status: e.statusCode, code: e.code };
  }
  try {
    await cs.managedClusters.createOrUpdate("js-rg", "bad", {
      location: "westeurope",
      properties: { kubernetesVersion: "1.20", dnsPrefix: "bad", agentPoolProfiles: [{ name: "np", count: 1, vmSize: "Standard_D2s_v3", mode: "System" }] },
    });
    out.createBad = "no error";
  } catch (e) {
    out.createBad = { status: e.statusCode, code: e.code };
  }

  await rm.resourceGroups.delete("js-rg");
  const exists = await rm.resourceGroups.checkExistence("js-rg");
  out.existsAfterDelete = exists.body === undefined ? exists : exists.body;
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stderr.write("azure js client: " + (e && e.stack ? e.stack : String(e)) + "\n");
  process.exit(1);
});
