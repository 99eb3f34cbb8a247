// Key Vault holding the scheduler's API keys.
//
// The app setting SCHEDULER_API_KEYS is a Key Vault reference to the versionless secret URI, so
// a new secret version (key rotation) reaches the app without a redeploy. The vault uses Azure
// RBAC (no access policies); app/rbac.bicep grants the app identity Key Vault Secrets User.
param name string
param location string = resourceGroup().location
param tags object = {}
param apiKeysSecretName string

@description('Purge protection (irreversible once on): a deleted vault stays recoverable for the retention period.')
param enablePurgeProtection bool = true

@secure()
@description('Comma-separated API keys; during a rotation both the old and the new key.')
param apiKeys string

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: subscription().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 7
    // Key Vault refuses `false` here (purge protection cannot be turned off): off is unset.
    enablePurgeProtection: enablePurgeProtection ? true : null
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
  }
}

resource apiKeysSecret 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = {
  parent: vault
  name: apiKeysSecretName
  properties: {
    value: apiKeys
    contentType: 'text/plain; comma-separated API keys'
  }
}

output name string = vault.name
output uri string = vault.properties.vaultUri
@description('Versionless secret URI: Key Vault references to it follow the newest version.')
output apiKeysSecretUri string = apiKeysSecret.properties.secretUri
