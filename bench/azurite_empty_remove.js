// Preload for Azurite (NODE_OPTIONS=--require=<this file>), for benchmarks only: an
// emulator artefact removed, nothing of the scheduler's changed.
//
// Azurite 3.35's queue service calls `clearExpiredMessages` before every receive, peek,
// delete and update of a message, and that calls LokiJS's `Collection.remove(docs)` even
// when no message expired. `remove([])` goes through `removeBatchByPositions`, which
// rebuilds every binary index of the messages collection (four, sorted afresh): each queue
// request costs O(M log M) in the messages of every queue, M. A scheduler that sends its
// occurrences' messages up to a minute ahead (invisible until their second) keeps M at a
// minute's occurrences, so Azurite's queue requests slow with the load (docs/cost.md,
// "Azurite's cost as the tables grow"); Azure's do not. Removing nothing now returns early.
// A receive also updates its messages with `Collection.update(docs)`, which for an array
// turns the adaptive indices off and rebuilds the four afterwards: here each message is
// updated on its own, the indices adjusted in place (the same documents, the same indices).
"use strict";
const loki = require("lokijs");

const remove = loki.Collection.prototype.remove;
loki.Collection.prototype.remove = function (doc) {
  if (Array.isArray(doc) && doc.length === 0) {
    return undefined;
  }
  return remove.call(this, doc);
};

const update = loki.Collection.prototype.update;
loki.Collection.prototype.update = function (doc) {
  if (Array.isArray(doc)) {
    for (const one of doc) {
      update.call(this, one);
    }
    return undefined;
  }
  return update.call(this, doc);
};
