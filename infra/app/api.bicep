// The Flex Consumption Function App, as in the Azure-Samples Flex quickstarts: a user-assigned
// identity authenticates the deployment package container, AzureWebJobsStorage (no connection
// string: shared keys are disabled on the account), Application Insights ingestion and Key Vault
// references.
param name string
param location string = resourceGroup().location
param tags object = {}
param applicationInsightsName string
param appServicePlanId string
@description('App settings of the scheduler itself; merged with the storage and monitoring settings below.')
param appSettings object = {}
param runtimeName string
param runtimeVersion string
param serviceName string = 'api'
param storageAccountName string
param deploymentStorageContainerName string
param instanceMemoryMB int = 2048
param maximumInstanceCount int = 40
param alwaysReadyHttpInstances int = 0
param identityId string
param identityClientId string

resource stg 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

// Identity-based host storage. `accountName` is what scheduler_lib reads; the service URIs are
// what the Functions host and the queue trigger use (explicit, so sovereign clouds work too).
var storageSettings = {
  AzureWebJobsStorage__accountName: stg.name
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identityClientId
  AzureWebJobsStorage__blobServiceUri: stg.properties.primaryEndpoints.blob
  AzureWebJobsStorage__queueServiceUri: stg.properties.primaryEndpoints.queue
  AzureWebJobsStorage__tableServiceUri: stg.properties.primaryEndpoints.table
}

// One path to Application Insights, as the Functions OpenTelemetry guide sets it up: host.json
// `telemetryMode: OpenTelemetry`, and the Python worker streams its own logs and traces
// (azure-monitor-opentelemetry from requirements.txt), which keeps the host from forwarding
// them a second time. function_app.py configures no exporter of its own.
// Application Insights has local (key) auth disabled: the host and the worker's exporter both
// authenticate with the identity named in the authentication string.
var monitoringSettings = {
  APPLICATIONINSIGHTS_CONNECTION_STRING: applicationInsights.properties.ConnectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'Authorization=AAD;ClientId=${identityClientId}'
  PYTHON_APPLICATIONINSIGHTS_ENABLE_TELEMETRY: 'true'
}

// Synchronous functions (HTTP actions wait up to 60 s on the network) run on the Python worker's
// thread pool, which otherwise defaults to min(32, cores + 4) threads: size it for host.json's
// queue concurrency (batchSize 16 + newBatchThreshold 12 = 28) plus the two timers.
var workerSettings = {
  PYTHON_THREADPOOL_THREAD_COUNT: '32'
}

var allAppSettings = union(appSettings, storageSettings, monitoringSettings, workerSettings)

// Optional warm instances for the HTTP trigger group only: timers and the queue executor
// tolerate a cold start, an API caller may not.
var httpAlwaysReady = [
  {
    name: 'http'
    instanceCount: alwaysReadyHttpInstances
  }
]

module api 'br/public:avm/res/web/site:0.15.1' = {
  name: '${serviceName}-flex-consumption'
  params: {
    kind: 'functionapp,linux'
    name: name
    location: location
    tags: union(tags, { 'azd-service-name': serviceName })
    serverFarmResourceId: appServicePlanId
    managedIdentities: {
      systemAssigned: false
      userAssignedResourceIds: [
        identityId
      ]
    }
    // Key Vault references (`@Microsoft.KeyVault(SecretUri=...)`) resolve with this identity.
    keyVaultAccessIdentityResourceId: identityId
    httpsOnly: true
    // No SCM/FTP basic-auth publishing credentials: azd and `func publish` deploy with Entra ID.
    basicPublishingCredentialsPolicies: [
      {
        name: 'ftp'
        allow: false
      }
      {
        name: 'scm'
        allow: false
      }
    ]
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${stg.properties.primaryEndpoints.blob}${deploymentStorageContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        instanceMemoryMB: instanceMemoryMB
        maximumInstanceCount: maximumInstanceCount
        alwaysReady: alwaysReadyHttpInstances > 0 ? httpAlwaysReady : []
      }
      runtime: {
        name: runtimeName
        version: runtimeVersion
      }
    }
    siteConfig: {
      alwaysOn: false
      minTlsVersion: '1.2'
    }
    appSettingsKeyValuePairs: allAppSettings
  }
}

output SERVICE_API_NAME string = api.outputs.name
output SERVICE_API_HOSTNAME string = api.outputs.defaultHostname
