// Azure Scheduler's Node SDK against this API: create a job with a value in every field,
// read it, write back what was read (GET-modify-PUT), read collections and lists.
// Usage: node roundtrip.js API_URL KEY SUBSCRIPTION RESOURCE_GROUP
// Prints one JSON object: what the SDK read, as its models hold it.
'use strict';
const moment = require('moment');
const msRest = require('ms-rest');
const SchedulerManagementClient = require('azure-arm-scheduler');

const [apiUrl, key, subscription, group] = process.argv.slice(2);
const client = new SchedulerManagementClient(
  new msRest.TokenCredentials(key), subscription, apiUrl, { noRetryPolicy: true },
);

function job() {
  return {
    properties: {
      startTime: new Date('2026-03-04T09:00:00Z'),
      state: 'Enabled',
      action: {
        type: 'Http',
        request: {
          uri: 'http://example.com/hook', method: 'POST', body: 'hello',
          headers: { 'X-Test': '1' },
          authentication: { type: 'Basic', username: 'node', password: 'node-secret' },
        },
        retryPolicy: { retryType: 'Fixed', retryInterval: moment.duration('PT2M'), retryCount: 3 },
        errorAction: {
          type: 'ServiceBusTopic',
          serviceBusTopicMessage: {
            topicPath: 't1', namespace: 'contoso-bus', transportType: 'AMQP', message: 'failed',
            authentication: { type: 'SharedAccessKey', sasKeyName: 'k', sasKey: 'sb-secret' },
            brokeredMessageProperties: { timeToLive: moment.duration('PT1H'), label: 'node' },
            customMessageProperties: { app: 'tests' },
          },
          retryPolicy: { retryType: 'None' },
        },
      },
      recurrence: {
        frequency: 'Month', interval: 1, count: 100, endTime: new Date('2027-01-01T00:00:00Z'),
        schedule: {
          hours: [9], minutes: [30], monthlyOccurrences: [{ day: 'Friday', occurrence: -1 }],
        },
      },
    },
  };
}

async function main() {
  await client.jobCollections.createOrUpdate(group, 'nodecoll', {
    location: 'westus', properties: { sku: { name: 'Standard' }, quota: {
      maxJobCount: 10, maxRecurrence: { frequency: 'Minute', interval: 1 } } },
  });
  const created = await client.jobs.createOrUpdate(group, 'nodecoll', 'hook', job());
  const read = await client.jobs.get(group, 'nodecoll', 'hook');
  const written = await client.jobs.createOrUpdate(group, 'nodecoll', 'hook', read);
  const collection = await client.jobCollections.get(group, 'nodecoll');
  const listed = await client.jobs.list(group, 'nodecoll');
  const collections = await client.jobCollections.listByResourceGroup(group);
  process.stdout.write(JSON.stringify({
    created, read, written, collection,
    jobs: listed.map((j) => j.name),
    collections: collections.map((c) => c.name),
  }));
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n${JSON.stringify(error.body || '')}\n`);
  process.exit(1);
});
