// Every role the app identity needs, and optional ones for the person running azd.
//
// App identity (ServicePrincipal):
//   Storage Blob Data Owner        host locks, timer schedule state, deployment package
//   Storage Queue Data Contributor execution queue (trigger, sends with visibility delay, poison)
//   Storage Table Data Contributor jobs, collections, due index, history, dispatcher state
//   Monitoring Metrics Publisher   Application Insights ingestion with local auth disabled
//   Key Vault Secrets User         resolving the SCHEDULER_API_KEYS Key Vault reference
// (Azure Service Bus Data Sender is granted by app/servicebus.bicep when the namespace exists.)
//
// Person running azd (optional): the same storage data roles for debugging with Storage
// Explorer or the az CLI, and Key Vault Secrets Officer to read and rotate the API keys.
param storageAccountName string
param appInsightsName string
param keyVaultName string
@description('Principal id of the app user-assigned identity.')
param managedIdentityPrincipalId string
@description('Principal id of the person or pipeline running azd; empty grants nothing.')
param userIdentityPrincipalId string = ''

var storageBlobDataOwnerRoleId = 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
var storageQueueDataContributorRoleId = '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
var storageTableDataContributorRoleId = '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
var monitoringMetricsPublisherRoleId = '3913510d-42f4-4e42-8a64-420c390055eb'
var keyVaultSecretsUserRoleId = '4633458b-17de-408a-b874-0445c86b69e6'
var keyVaultSecretsOfficerRoleId = 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7'

var storageRoleIds = [
  storageBlobDataOwnerRoleId
  storageQueueDataContributorRoleId
  storageTableDataContributorRoleId
]

var grantUser = !empty(userIdentityPrincipalId)

resource storageAccount 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: appInsightsName
}

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' existing = {
  name: keyVaultName
}

resource storageRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for roleId in storageRoleIds: {
    name: guid(storageAccount.id, managedIdentityPrincipalId, roleId)
    scope: storageAccount
    properties: {
      roleDefinitionId: resourceId('Microsoft.Authorization/roleDefinitions', roleId)
      principalId: managedIdentityPrincipalId
      principalType: 'ServicePrincipal'
    }
  }
]

resource monitoringRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(applicationInsights.id, managedIdentityPrincipalId, monitoringMetricsPublisherRoleId)
  scope: applicationInsights
  properties: {
    roleDefinitionId: resourceId('Microsoft.Authorization/roleDefinitions', monitoringMetricsPublisherRoleId)
    principalId: managedIdentityPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource secretsUserRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, managedIdentityPrincipalId, keyVaultSecretsUserRoleId)
  scope: vault
  properties: {
    roleDefinitionId: resourceId('Microsoft.Authorization/roleDefinitions', keyVaultSecretsUserRoleId)
    principalId: managedIdentityPrincipalId
    principalType: 'ServicePrincipal'
  }
}

// principalType is left out for the azd user: it may be a person or a CI service principal.
resource userStorageRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for roleId in storageRoleIds: if (grantUser) {
    name: guid(storageAccount.id, userIdentityPrincipalId, roleId)
    scope: storageAccount
    properties: {
      roleDefinitionId: resourceId('Microsoft.Authorization/roleDefinitions', roleId)
      principalId: userIdentityPrincipalId
    }
  }
]

resource userSecretsOfficerRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (grantUser) {
  name: guid(vault.id, userIdentityPrincipalId, keyVaultSecretsOfficerRoleId)
  scope: vault
  properties: {
    roleDefinitionId: resourceId('Microsoft.Authorization/roleDefinitions', keyVaultSecretsOfficerRoleId)
    principalId: userIdentityPrincipalId
  }
}
