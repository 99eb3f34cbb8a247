// Optional Service Bus namespace that Service Bus actions can target.
//
// Standard tier: topics (ServiceBusTopic actions) need it, Basic has queues only. Local (SAS)
// auth stays enabled because Azure Scheduler job definitions carry a SAS key name and key; the
// app identity is also allowed to send, for targets that use Entra ID instead.
param name string
param location string = resourceGroup().location
param tags object = {}
@description('Principal id of the app identity, given Azure Service Bus Data Sender.')
param senderPrincipalId string

var serviceBusDataSenderRoleId = '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39' // Azure Service Bus Data Sender

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: 'Standard'
    tier: 'Standard'
  }
  properties: {
    minimumTlsVersion: '1.2'
    disableLocalAuth: false
  }
}

resource senderRoleAssignment 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(namespace.id, senderPrincipalId, serviceBusDataSenderRoleId)
  scope: namespace
  properties: {
    roleDefinitionId: resourceId('Microsoft.Authorization/roleDefinitions', serviceBusDataSenderRoleId)
    principalId: senderPrincipalId
    principalType: 'ServicePrincipal'
  }
}

output name string = namespace.name
output endpoint string = namespace.properties.serviceBusEndpoint
