// Azure Scheduler replacement on Azure Functions (Flex Consumption, Python 3.11).
//
// Structure follows the Azure-Samples Flex Consumption quickstarts
// (functions-quickstart-python-http-azd, fastapi-on-azure-functions): a user-assigned identity,
// an FC1 plan, an identity-only storage account holding the deployment package container, and
// Application Insights with local auth disabled. On top of that this template creates what the
// scheduler itself uses: its tables and queues, a Key Vault holding the API keys, and an
// optional Service Bus namespace.
//
// tests/test_infra.py checks this file against scheduler_lib/config.py: every app setting the
// code reads is set here (or explicitly allow-listed there), every table and queue exists, and the
// Python version matches pyproject.toml.
targetScope = 'subscription'

@minLength(1)
@maxLength(64)
@description('Name of the azd environment; used to derive a unique token for resource names.')
param environmentName string

@minLength(1)
@description('Region for every resource. Restricted to regions that offer Flex Consumption.')
@allowed([
  'australiaeast'
  'australiasoutheast'
  'brazilsouth'
  'canadacentral'
  'centralindia'
  'centralus'
  'eastasia'
  'eastus'
  'eastus2'
  'francecentral'
  'germanywestcentral'
  'italynorth'
  'japaneast'
  'koreacentral'
  'northcentralus'
  'northeurope'
  'norwayeast'
  'southafricanorth'
  'southcentralus'
  'southeastasia'
  'southindia'
  'spaincentral'
  'swedencentral'
  'uaenorth'
  'uksouth'
  'ukwest'
  'westcentralus'
  'westeurope'
  'westus'
  'westus2'
  'westus3'
])
@metadata({
  azd: {
    type: 'location'
  }
})
param location string

@description('Object id of the person or pipeline running azd; gets data-plane roles for debugging and Key Vault secret rotation. Leave empty to grant nothing.')
param principalId string = ''

@secure()
@minLength(12)
@description('Comma-separated API keys accepted as `Authorization: Bearer <key>`. azd reads the current Key Vault secret (or generates one on the first run), so re-provisioning keeps rotated keys.')
param schedulerApiKeys string

@description('Create a Service Bus namespace (Standard) that Service Bus actions can target with the app identity.')
param deployServiceBus bool = false

@description('ISO 8601 duration a missed occurrence may still run late (SCHEDULER_GRACE_PERIOD).')
param gracePeriod string = 'PT5M'

@description('How exactly occurrences start (SCHEDULER_PRECISION): second holds each one in its invocation for 1-2 s to start it at its second; minute starts it when the queue trigger takes it, a second or two later, without the billed hold. See docs/cost.md.')
@allowed([
  'second'
  'minute'
])
param precision string = 'second'

@description('With precision minute, a window in seconds (SCHEDULER_COALESCE_SECONDS, 0-60; 0: off): the occurrences due within each window start together at its end, in one queue message and one function execution, each up to that many seconds late, never early. Spread occurrences then share the execution and its billed second. See docs/cost.md.')
@minValue(0)
@maxValue(60)
param coalesceSeconds int = 0

@description('When an attempt sends its watchdog message (SCHEDULER_WATCHDOG): claim sends it with every claim, so a worker that dies is taken over within ~20 s; heartbeat sends it only for an attempt still running at its first heartbeat (3 s), two queue operations fewer for the others, whose worker dying before that beat is run again by the queue\'s redelivery ~10 minutes later. See docs/cost.md.')
@allowed([
  'claim'
  'heartbeat'
])
param watchdog string = 'claim'

@description('Shards of the due index (SCHEDULER_DISPATCH_SHARDS, 1-64): at most how many pairs the dispatch function handles in parallel each minute. Shards whose rows are few between them (up to 2,000) share one pair, so their occurrences due in the same second share a queue message; a larger minute gets a pair per shard. See docs/capacity.md and docs/cost.md.')
@minValue(1)
@maxValue(64)
param dispatchShards int = 8

@description('Comma-separated CIDRs and host names of private targets (reached through VNet integration) that actions may call (SCHEDULER_EGRESS_ALLOW). Empty: public addresses only; metadata and link-local addresses are refused whatever this says.')
param egressAllow string = ''

@description('Audiences the app\'s managed identity may get tokens for on behalf of ManagedServiceIdentity HTTP actions, each with the hosts its tokens may go to (SCHEDULER_IDENTITY_AUDIENCES): <audience>=<host>[,<host>...], entries separated by ";", e.g. "api://orders=orders.example.com,*.orders.example.org". Empty (the default): the type is refused. Never list the audiences of the app\'s own storage, management plane or vault unless every API key holder may use them.')
param identityAudiences string = ''

@description('DNS suffix of Service Bus namespaces; change only for sovereign clouds.')
param serviceBusEndpointSuffix string = 'servicebus.windows.net'

@allowed([
  512
  2048
  4096
])
@description('Memory of each Flex Consumption instance (MB); CPU scales with it.')
param instanceMemoryMB int = 2048

@minValue(40)
@maxValue(1000)
@description('Upper bound on Flex Consumption scale-out; caps the cost of a runaway queue.')
param maximumInstanceCount int = 40

@minValue(0)
@description('Always-ready instances for the HTTP API (removes cold starts; billed even when idle).')
param alwaysReadyHttpInstances int = 0

@description('Storage redundancy of the account holding jobs, history and queues.')
@allowed([
  'Standard_LRS'
  'Standard_ZRS'
  'Standard_GRS'
])
param storageSkuName string = 'Standard_LRS'

@description('Key Vault purge protection: a deleted vault and its API keys stay recoverable for the retention period (7 days), and its name stays taken until then. Turn off only for throwaway environments that `azd down --purge` should free at once; once on, it cannot be turned off.')
param keyVaultPurgeProtection bool = true

@description('Email address that Azure Monitor alerts go to (dispatcher stalled, overdue jobs, failure rate, poisoned messages; docs/metrics.md). Empty, with alertWebhookUrl empty too: no action group, and the alerts only show in the portal.')
param alertEmail string = ''

@secure()
@description('HTTPS URL that the same alerts are posted to (Azure Monitor common alert schema). Empty: no webhook.')
param alertWebhookUrl string = ''

@minValue(1)
@maxValue(100)
@description('Percentage of the occurrences that ran within 15 minutes and failed (Faulted or Poisoned) that raises the failure-rate alert.')
param alertFailureRatePercent int = 10

// Optional name overrides (empty = derived from the environment).
param resourceGroupName string = ''
param functionAppName string = ''
param storageAccountName string = ''
param keyVaultName string = ''

var resourceToken = toLower(uniqueString(subscription().id, environmentName, location))
var tags = {
  'azd-env-name': environmentName
}
var apiName = !empty(functionAppName) ? functionAppName : 'func-api-${resourceToken}'
var deploymentStorageContainerName = 'app-package-${take(apiName, 32)}-${take(toLower(uniqueString(apiName, resourceToken)), 7)}'
var vaultName = !empty(keyVaultName) ? keyVaultName : 'kv-${resourceToken}'
var apiKeysSecretName = 'scheduler-api-keys'
// Entra ID authority for ActiveDirectoryOAuth actions, without the trailing slash
// ('https://login.microsoftonline.com' in the public cloud).
var loginEndpoint = environment().authentication.loginEndpoint
var oauthAuthority = endsWith(loginEndpoint, '/') ? substring(loginEndpoint, 0, length(loginEndpoint) - 1) : loginEndpoint

// The Python version of pyproject.toml `requires-python` (checked by tests/test_infra.py).
var pythonVersion = '3.11'

// Storage the code uses (scheduler_lib/config.py): in Azure SCHEDULER_STORAGE_PREFIX is empty,
// so the stored names are the logical names. The Functions runtime moves a message to the
// `-poison` queue after host.json maxDequeueCount failed attempts.
var tableNames = [
  'JobCollections'
  'Jobs'
  'JobDueIndex'
  'JobHistory'
  'SchedulerState'
  'JobDeadlines'
  'NotificationDeliveries'
]
var executionQueueName = 'scheduler-executions'
// The coordinator (timer) sends one control message per due (minute, shard) pair here; the
// dispatch function handles each.
var dispatchQueueName = 'scheduler-dispatch'
var queueNames = [
  executionQueueName
  '${executionQueueName}-poison'
  dispatchQueueName
  '${dispatchQueueName}-poison'
  // Notices, delivered by the notify function (docs/notifications.md).
  '${executionQueueName}-notify'
  '${executionQueueName}-notify-poison'
]

resource rg 'Microsoft.Resources/resourceGroups@2021-04-01' = {
  name: !empty(resourceGroupName) ? resourceGroupName : 'rg-${environmentName}'
  location: location
  tags: tags
}

// The one identity of the app: storage (host + data), Key Vault references, App Insights
// ingestion, Service Bus sends and the deployment package all authenticate with it.
module apiIdentity 'br/public:avm/res/managed-identity/user-assigned-identity:0.4.1' = {
  name: 'apiUserAssignedIdentity'
  scope: rg
  params: {
    name: 'id-api-${resourceToken}'
    location: location
    tags: tags
  }
}

module appServicePlan 'br/public:avm/res/web/serverfarm:0.1.1' = {
  name: 'appserviceplan'
  scope: rg
  params: {
    name: 'plan-${resourceToken}'
    sku: {
      name: 'FC1'
      tier: 'FlexConsumption'
    }
    reserved: true
    location: location
    tags: tags
  }
}

// Identity-only storage: AzureWebJobsStorage (host locks, timer state, deployment package),
// the scheduler's tables and its execution queue.
module storage 'br/public:avm/res/storage/storage-account:0.8.3' = {
  name: 'storage'
  scope: rg
  params: {
    name: !empty(storageAccountName) ? storageAccountName : 'st${resourceToken}'
    skuName: storageSkuName
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    // No object replication into another tenant's account, and the portal and tools use
    // Entra ID (there are no keys to fall back to anyway).
    allowCrossTenantReplication: false
    defaultToOAuthAuthentication: true
    dnsEndpointType: 'Standard'
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
    blobServices: {
      containers: [
        {
          name: deploymentStorageContainerName
        }
      ]
    }
    minimumTlsVersion: 'TLS1_2'
    location: location
    tags: tags
  }
}

module storageData './app/storage-data.bicep' = {
  name: 'storageData'
  scope: rg
  params: {
    storageAccountName: storage.outputs.name
    tableNames: tableNames
    queueNames: queueNames
  }
}

module logAnalytics 'br/public:avm/res/operational-insights/workspace:0.7.0' = {
  name: '${uniqueString(deployment().name, location)}-loganalytics'
  scope: rg
  params: {
    name: 'log-${resourceToken}'
    location: location
    tags: tags
    dataRetention: 30
  }
}

module monitoring 'br/public:avm/res/insights/component:0.4.1' = {
  name: '${uniqueString(deployment().name, location)}-appinsights'
  scope: rg
  params: {
    name: 'appi-${resourceToken}'
    location: location
    tags: tags
    workspaceResourceId: logAnalytics.outputs.resourceId
    disableLocalAuth: true
  }
}

// Alert rules on the app's metrics and logs, an action group for them when an email or a
// webhook is given, and a workbook (app/alerts.bicep; tests/test_infra_alerts.py).
module alerts './app/alerts.bicep' = {
  name: 'alerts'
  scope: rg
  params: {
    location: location
    tags: tags
    resourceToken: resourceToken
    workspaceId: logAnalytics.outputs.resourceId
    alertEmail: alertEmail
    alertWebhookUrl: alertWebhookUrl
    failureRatePercent: alertFailureRatePercent
  }
}

module keyVault './app/keyvault.bicep' = {
  name: 'keyvault'
  scope: rg
  params: {
    name: vaultName
    location: location
    tags: tags
    apiKeysSecretName: apiKeysSecretName
    apiKeys: schedulerApiKeys
    enablePurgeProtection: keyVaultPurgeProtection
  }
}

module serviceBus './app/servicebus.bicep' = if (deployServiceBus) {
  name: 'servicebus'
  scope: rg
  params: {
    name: 'sb-${resourceToken}'
    location: location
    tags: tags
    senderPrincipalId: apiIdentity.outputs.principalId
  }
}

module rbac './app/rbac.bicep' = {
  name: 'rbacAssignments'
  scope: rg
  params: {
    storageAccountName: storage.outputs.name
    appInsightsName: monitoring.outputs.name
    keyVaultName: keyVault.outputs.name
    managedIdentityPrincipalId: apiIdentity.outputs.principalId
    userIdentityPrincipalId: principalId
  }
}

module api './app/api.bicep' = {
  name: 'api'
  scope: rg
  params: {
    name: apiName
    location: location
    tags: tags
    applicationInsightsName: monitoring.outputs.name
    appServicePlanId: appServicePlan.outputs.resourceId
    runtimeName: 'python'
    runtimeVersion: pythonVersion
    storageAccountName: storage.outputs.name
    deploymentStorageContainerName: deploymentStorageContainerName
    identityId: apiIdentity.outputs.resourceId
    identityClientId: apiIdentity.outputs.clientId
    instanceMemoryMB: instanceMemoryMB
    maximumInstanceCount: maximumInstanceCount
    alwaysReadyHttpInstances: alwaysReadyHttpInstances
    // Settings of scheduler_lib/config.py APP_SETTINGS; the identity-based storage and
    // Application Insights settings are added by app/api.bicep.
    appSettings: {
      SCHEDULER_API_KEYS: '@Microsoft.KeyVault(SecretUri=${keyVault.outputs.apiKeysSecretUri})'
      SCHEDULER_EXECUTION_QUEUE: executionQueueName
      SCHEDULER_DISPATCH_QUEUE: dispatchQueueName
      SCHEDULER_DISPATCH_SHARDS: string(dispatchShards)
      SCHEDULER_GRACE_PERIOD: gracePeriod
      SCHEDULER_PRECISION: precision
      SCHEDULER_COALESCE_SECONDS: string(coalesceSeconds)
      SCHEDULER_WATCHDOG: watchdog
      SCHEDULER_STORAGE_QUEUE_ENDPOINT: 'https://{account}.queue.${environment().suffixes.storage}'
      SCHEDULER_SERVICEBUS_ENDPOINT_SUFFIX: serviceBusEndpointSuffix
      SCHEDULER_OAUTH_AUTHORITY: oauthAuthority
      SCHEDULER_EGRESS_ALLOW: egressAllow
      // Identity-based (secret-less) queue and Service Bus actions reach only these.
      SCHEDULER_IDENTITY_STORAGE_ACCOUNTS: storage.outputs.name
      SCHEDULER_IDENTITY_SERVICEBUS_NAMESPACES: deployServiceBus ? serviceBus!.outputs.name : ''
      // ManagedServiceIdentity HTTP actions: closed unless the operator lists audiences.
      SCHEDULER_IDENTITY_AUDIENCES: identityAudiences
    }
  }
  // The app starts polling its queue and resolving its Key Vault reference as soon as it
  // exists: create the queue and the role assignments first.
  dependsOn: [
    rbac
    storageData
  ]
}

output AZURE_LOCATION string = location
output AZURE_TENANT_ID string = tenant().tenantId
output AZURE_RESOURCE_GROUP string = rg.name
output AZURE_FUNCTION_NAME string = api.outputs.SERVICE_API_NAME
output SERVICE_API_NAME string = api.outputs.SERVICE_API_NAME
@description('Base URL of the Scheduler REST API: give it to SchedulerManagementClient as base_url.')
output SCHEDULER_API_BASE_URL string = 'https://${api.outputs.SERVICE_API_HOSTNAME}/api'
// Read by main.parameters.json (secretOrRandomPassword) on the next provision.
output AZURE_KEY_VAULT_NAME string = keyVault.outputs.name
output AZURE_KEY_VAULT_ENDPOINT string = keyVault.outputs.uri
output SCHEDULER_API_KEYS_SECRET_NAME string = apiKeysSecretName
output AZURE_STORAGE_ACCOUNT_NAME string = storage.outputs.name
output AZURE_USER_ASSIGNED_IDENTITY_CLIENT_ID string = apiIdentity.outputs.clientId
output SERVICE_BUS_NAMESPACE string = deployServiceBus ? serviceBus!.outputs.name : ''
