// Alerts and a workbook on the scheduler's telemetry in the Log Analytics workspace behind
// Application Insights (docs/metrics.md, "Alerts in Azure").
//
// The OpenTelemetry metrics arrive in AppMetrics (Name = the instrument's name, Properties =
// its attributes, Sum = a counter's count of one minute; a histogram's count, sum, minimum
// and maximum of one minute), the logs in AppTraces. The queries are files of their own
// (monitoring/), so tests/test_infra_alerts.py can check that every metric, attribute,
// outcome and log message they name is one the app emits.

@description('Region of the alert rules and the workbook.')
param location string

param tags object = {}

@description('Suffix that makes the names unique (main.bicep\'s resource token).')
param resourceToken string

@description('Resource id of the Log Analytics workspace that Application Insights writes to.')
param workspaceId string

@description('Email address the alerts go to. Empty, with alertWebhookUrl empty too: no action group.')
param alertEmail string = ''

@secure()
@description('HTTPS URL the alerts are posted to (common alert schema). Secure: such a URL often carries its own key.')
param alertWebhookUrl string = ''

@minValue(1)
@maxValue(100)
@description('Percentage of occurrences that ran and failed (Faulted or Poisoned) within 15 minutes that raises the failure-rate alert.')
param failureRatePercent int = 10

var hasReceivers = !empty(alertEmail) || !empty(alertWebhookUrl)

// Log search alerts, one per file of monitoring/. A rule measuring a column (`measure`)
// compares its aggregate with the threshold; the others count the query's rows.
var alertRules = [
  {
    name: 'dispatcher-stalled'
    displayName: 'Scheduler: dispatcher stalled'
    description: 'No dispatcher tick for 10 minutes: no job is being dispatched (the timer stopped, the coordinator fails, or the app is down).'
    severity: 1
    query: loadTextContent('monitoring/dispatcher-stalled.kql')
    measure: ''
    timeAggregation: 'Count'
    operator: 'LessThan'
    threshold: 1
    windowSize: 'PT10M'
  }
  {
    name: 'overdue-jobs'
    displayName: 'Scheduler: overdue jobs'
    description: 'The overdue-job check found Enabled jobs past their next execution without a due-index row (it re-indexed them); something lost their rows.'
    severity: 2
    query: loadTextContent('monitoring/overdue-jobs.kql')
    measure: ''
    timeAggregation: 'Count'
    operator: 'GreaterThan'
    threshold: 0
    windowSize: 'PT10M'
  }
  {
    name: 'failure-rate'
    displayName: 'Scheduler: failure rate'
    description: 'More than the set percentage of the occurrences that ran in 15 minutes failed (Faulted or Poisoned).'
    severity: 2
    query: loadTextContent('monitoring/failure-rate.kql')
    measure: 'FailurePercent'
    timeAggregation: 'Maximum'
    operator: 'GreaterThan'
    threshold: failureRatePercent
    windowSize: 'PT15M'
  }
  {
    name: 'poisoned-messages'
    displayName: 'Scheduler: poisoned messages'
    description: 'Execution messages failed as often as the Functions host allows and went to the poison queue; their jobs\' histories say why.'
    severity: 2
    query: loadTextContent('monitoring/poisoned-messages.kql')
    measure: 'Poisoned'
    timeAggregation: 'Total'
    operator: 'GreaterThan'
    threshold: 0
    windowSize: 'PT15M'
  }
]

resource actionGroup 'Microsoft.Insights/actionGroups@2023-01-01' = if (hasReceivers) {
  name: 'ag-scheduler-${resourceToken}'
  location: 'global'
  tags: tags
  properties: {
    groupShortName: 'scheduler'
    enabled: true
    emailReceivers: empty(alertEmail) ? [] : [
      {
        name: 'email'
        emailAddress: alertEmail
        useCommonAlertSchema: true
      }
    ]
    webhookReceivers: empty(alertWebhookUrl) ? [] : [
      {
        name: 'webhook'
        serviceUri: alertWebhookUrl
        useCommonAlertSchema: true
      }
    ]
  }
}

resource rules 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = [for rule in alertRules: {
  name: 'scheduler-${rule.name}-${resourceToken}'
  location: location
  tags: tags
  kind: 'LogAlert'
  properties: {
    displayName: rule.displayName
    description: rule.description
    severity: rule.severity
    enabled: true
    scopes: [
      workspaceId
    ]
    evaluationFrequency: 'PT5M'
    windowSize: rule.windowSize
    // AppMetrics and AppTraces exist in a new workspace only once the app sent its first
    // record; validating the query before then fails the deployment.
    skipQueryValidation: true
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: rule.query
          timeAggregation: rule.timeAggregation
          metricMeasureColumn: empty(rule.measure) ? null : rule.measure
          operator: rule.operator
          threshold: rule.threshold
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    // Without receivers the alerts still fire, in the portal's alert list.
    actions: {
      actionGroups: hasReceivers ? [
        actionGroup!.id
      ] : []
    }
  }
}]

resource workbook 'Microsoft.Insights/workbooks@2023-06-01' = {
  name: guid(resourceGroup().id, 'scheduler-workbook', resourceToken)
  location: location
  tags: tags
  kind: 'shared'
  properties: {
    displayName: 'Scheduler: lateness, outcomes, worst jobs'
    category: 'workbook'
    sourceId: workspaceId
    serializedData: loadTextContent('monitoring/workbook.json')
  }
}

output actionGroupId string = hasReceivers ? actionGroup!.id : ''
output alertRuleNames array = [for (rule, i) in alertRules: rules[i].name]
output workbookId string = workbook.id
