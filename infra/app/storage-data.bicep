// The scheduler's own tables and queues, in the AzureWebJobsStorage account.
//
// Created here rather than lazily by the code: with identity-based access the app's role is a
// data role, and a table or queue that exists from the first second means the queue trigger
// and the first API call never race a "create if missing".
param storageAccountName string
@description('Table names (letters and digits, 3-63 characters).')
param tableNames array
@description('Queue names (lowercase letters, digits and hyphens, 3-63 characters).')
param queueNames array

resource stg 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

// The `default` table and queue services exist implicitly in every StorageV2 account.
resource tableService 'Microsoft.Storage/storageAccounts/tableServices@2023-05-01' existing = {
  parent: stg
  name: 'default'
}

resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2023-05-01' existing = {
  parent: stg
  name: 'default'
}

resource tables 'Microsoft.Storage/storageAccounts/tableServices/tables@2023-05-01' = [
  for tableName in tableNames: {
    parent: tableService
    name: tableName
  }
]

resource queues 'Microsoft.Storage/storageAccounts/queueServices/queues@2023-05-01' = [
  for queueName in queueNames: {
    parent: queueService
    name: queueName
    properties: {
      metadata: {}
    }
  }
]
