"""The host <-> worker messages, as real protobuf classes, for `azure_functions_runtime`.

Azure's Python worker is two parts: a proxy that holds the gRPC stream to the host, and the
runtime library (`azure-functions-runtime` on PyPI) that indexes `function_app.py`, converts
bindings and invokes functions. The proxy hands the runtime its generated protobuf module
(`request.properties["protos"]`); the runtime only builds and reads messages through it. The
proxy is not on PyPI, so this module builds the same message classes with protobuf itself.

`SCHEMA` is the part of the host's `FunctionRpc.proto` that the runtime touches: same message,
field, enum and oneof names and types (protobuf then refuses a field the runtime sets that is
not in the protocol, or a value of the wrong type, as the real classes do). The field numbers
are ours: the messages never leave this process, so no wire format is at stake.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, duration_pb2, timestamp_pb2
from google.protobuf.message_factory import GetMessageClass

SCHEMA = """
message StreamingMessage {
  string request_id = 1;
  oneof content {
    WorkerInitRequest worker_init_request = 2;
    FunctionsMetadataRequest functions_metadata_request = 3;
    FunctionLoadRequest function_load_request = 4;
    InvocationRequest invocation_request = 5;
  }
}
message StatusResult {
  enum Status { Failure = 0; Success = 1; Cancelled = 2; }
  Status status = 4;
  string result = 1;
  RpcException exception = 2;
}
message RpcException {
  string source = 3;
  string stack_trace = 1;
  string message = 2;
  bool is_user_exception = 4;
  string type = 5;
}
message WorkerMetadata {
  string runtime_name = 1;
  string runtime_version = 2;
  string worker_version = 3;
  string worker_bitness = 4;
  map<string, string> custom_properties = 5;
}
message WorkerInitRequest {
  string host_version = 1;
  map<string, string> capabilities = 2;
  map<string, string> log_categories = 3;
  string worker_directory = 4;
  string function_app_directory = 5;
}
message WorkerInitResponse {
  string worker_version = 1;
  map<string, string> capabilities = 2;
  StatusResult result = 3;
  WorkerMetadata worker_metadata = 4;
}
message FunctionsMetadataRequest { string function_app_directory = 1; }
message FunctionMetadataResponse {
  repeated RpcFunctionMetadata function_metadata_results = 1;
  StatusResult result = 2;
  bool use_default_metadata_indexing = 3;
}
message BindingInfo {
  enum Direction { in = 0; out = 1; inout = 2; }
  enum DataType { undefined = 0; string = 1; binary = 2; stream = 3; }
  string type = 2;
  Direction direction = 3;
  DataType data_type = 4;
  map<string, string> properties = 5;
}
message RpcRetryOptions {
  enum RetryStrategy { exponential_backoff = 0; fixed_delay = 1; }
  int32 max_retry_count = 2;
  google.protobuf.Duration delay_interval = 3;
  google.protobuf.Duration minimum_interval = 4;
  google.protobuf.Duration maximum_interval = 5;
  RetryStrategy retry_strategy = 6;
}
message RpcFunctionMetadata {
  string name = 4;
  string directory = 1;
  string script_file = 2;
  string entry_point = 3;
  map<string, BindingInfo> bindings = 6;
  bool is_proxy = 7;
  StatusResult status = 8;
  string language = 9;
  repeated string raw_bindings = 10;
  string function_id = 13;
  bool managed_dependency_enabled = 14;
  RpcRetryOptions retry_options = 15;
  map<string, string> properties = 16;
}
message FunctionLoadRequest {
  string function_id = 1;
  RpcFunctionMetadata metadata = 2;
  bool managed_dependency_enabled = 3;
}
message FunctionLoadResponse {
  string function_id = 1;
  StatusResult result = 2;
  bool is_dependency_downloaded = 3;
}
message RpcTraceContext {
  string trace_parent = 1;
  string trace_state = 2;
  map<string, string> attributes = 3;
}
message RetryContext {
  int32 retry_count = 1;
  int32 max_retry_count = 2;
  RpcException exception = 3;
}
message InvocationRequest {
  string invocation_id = 1;
  string function_id = 2;
  repeated ParameterBinding input_data = 3;
  map<string, TypedData> trigger_metadata = 4;
  RpcTraceContext trace_context = 5;
  RetryContext retry_context = 6;
}
message InvocationResponse {
  string invocation_id = 1;
  repeated ParameterBinding output_data = 2;
  TypedData return_value = 4;
  StatusResult result = 3;
}
message RpcSharedMemory {
  string name = 1;
  int64 offset = 2;
  int64 count = 3;
}
message ParameterBinding {
  string name = 1;
  oneof rpc_data {
    TypedData data = 2;
    RpcSharedMemory rpc_shared_memory = 3;
  }
}
message TypedData {
  oneof data {
    string string = 1;
    string json = 2;
    bytes bytes = 3;
    bytes stream = 4;
    RpcHttp http = 5;
    sint64 int = 6;
    double double = 7;
    CollectionBytes collection_bytes = 8;
    CollectionString collection_string = 9;
    CollectionDouble collection_double = 10;
    CollectionSInt64 collection_sint64 = 11;
    ModelBindingData model_binding_data = 12;
    CollectionModelBindingData collection_model_binding_data = 13;
  }
}
message CollectionString { repeated string string = 1; }
message CollectionBytes { repeated bytes bytes = 1; }
message CollectionDouble { repeated double double = 1; }
message CollectionSInt64 { repeated sint64 sint64 = 1; }
message ModelBindingData {
  string version = 1;
  string source = 2;
  string content_type = 3;
  bytes content = 4;
}
message CollectionModelBindingData { repeated ModelBindingData model_binding_data = 1; }
message RpcHttp {
  string method = 1;
  string url = 2;
  map<string, string> headers = 3;
  TypedData body = 4;
  map<string, string> params = 10;
  string status_code = 12;
  map<string, string> query = 15;
  bool enable_content_negotiation = 16;
  TypedData rawBody = 17;
  repeated RpcHttpCookie cookies = 19;
  map<string, NullableString> nullable_headers = 20;
  map<string, NullableString> nullable_params = 21;
  map<string, NullableString> nullable_query = 22;
}
message RpcHttpCookie {
  enum SameSite { None = 0; Lax = 1; Strict = 2; ExplicitNone = 3; }
  string name = 1;
  string value = 2;
  NullableString domain = 3;
  NullableString path = 4;
  NullableTimestamp expires = 5;
  NullableBool secure = 6;
  NullableBool http_only = 7;
  SameSite same_site = 8;
  NullableDouble max_age = 9;
}
message NullableString { oneof string { string value = 1; } }
message NullableDouble { oneof double { double value = 1; } }
message NullableBool { oneof bool { bool value = 1; } }
message NullableTimestamp { oneof timestamp { google.protobuf.Timestamp value = 1; } }
"""

PACKAGE = "scheduler.tests.rpc"
_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
    "bool": _F.TYPE_BOOL,
    "int32": _F.TYPE_INT32,
    "int64": _F.TYPE_INT64,
    "sint64": _F.TYPE_SINT64,
    "double": _F.TYPE_DOUBLE,
}
_WELL_KNOWN = {"google.protobuf.Duration", "google.protobuf.Timestamp"}
_TOKEN = re.compile(r"[A-Za-z_][\w.]*|\d+|[{}<>,;=]")


class _Parser:
    """The few proto3 forms SCHEMA uses: messages, nested enums, oneofs, maps, repeated."""

    def __init__(self, text: str) -> None:
        self.tokens = _TOKEN.findall(text)
        self.at = 0
        self.enums: set[str] = set()  # "Message.Enum", each declared before its fields
        self.file = descriptor_pb2.FileDescriptorProto(
            name="function_rpc_subset.proto",
            package=PACKAGE,
            syntax="proto3",
            dependency=["google/protobuf/duration.proto", "google/protobuf/timestamp.proto"],
        )

    def take(self, expected: str | None = None) -> str:
        token = self.tokens[self.at]
        if expected is not None and token != expected:
            raise SyntaxError(f"expected {expected!r}, got {token!r} at token {self.at}")
        self.at += 1
        return token

    def parse(self) -> descriptor_pb2.FileDescriptorProto:
        while self.at < len(self.tokens):
            self.take("message")
            self.message(self.file.message_type.add())
        return self.file

    def message(self, msg: descriptor_pb2.DescriptorProto) -> None:
        msg.name = self.take()
        self.take("{")
        oneof: int | None = None
        while True:
            token = self.take()
            if token == "}":
                if oneof is None:
                    return
                oneof = None
            elif token == "enum":
                enum = msg.enum_type.add(name=self.take())
                self.enums.add(f"{msg.name}.{enum.name}")
                self.take("{")
                while (value := self.take()) != "}":
                    self.take("=")
                    enum.value.add(name=value, number=int(self.take()))
                    self.take(";")
            elif token == "oneof":
                oneof = len(msg.oneof_decl)
                msg.oneof_decl.add(name=self.take())
                self.take("{")
            elif token == "map":
                self.map_field(msg)
            else:
                repeated = token == "repeated"
                kind = self.take() if repeated else token
                field = self.field(msg, kind, repeated=repeated)
                if oneof is not None:
                    field.oneof_index = oneof

    def field(self, msg: Any, kind: str, *, repeated: bool = False) -> Any:
        name = self.take()
        self.take("=")
        field = msg.field.add(name=name, number=int(self.take()))
        self.take(";")
        field.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
        if kind in _SCALARS:
            field.type = _SCALARS[kind]
        elif kind in _WELL_KNOWN:
            field.type, field.type_name = _F.TYPE_MESSAGE, "." + kind
        elif f"{msg.name}.{kind}" in self.enums:
            field.type, field.type_name = _F.TYPE_ENUM, f".{PACKAGE}.{msg.name}.{kind}"
        else:
            field.type, field.type_name = _F.TYPE_MESSAGE, f".{PACKAGE}.{kind}"
        return field

    def map_field(self, msg: descriptor_pb2.DescriptorProto) -> None:
        """`map<K, V> name = N;`: a repeated field of a nested `NameEntry` map-entry type."""
        self.take("<")
        key = self.take()
        self.take(",")
        value = self.take()
        self.take(">")
        name = self.tokens[self.at]
        entry = msg.nested_type.add(name="".join(p.title() for p in name.split("_")) + "Entry")
        entry.options.map_entry = True
        for kind, field_name, number in ((key, "key", 1), (value, "value", 2)):
            entry_field = entry.field.add(name=field_name, number=number)
            entry_field.label = _F.LABEL_OPTIONAL
            if kind in _SCALARS:
                entry_field.type = _SCALARS[kind]
            else:
                entry_field.type, entry_field.type_name = _F.TYPE_MESSAGE, f".{PACKAGE}.{kind}"
        field = self.field(msg, "bytes", repeated=True)
        field.type, field.type_name = _F.TYPE_MESSAGE, f".{PACKAGE}.{msg.name}.{entry.name}"


def build_protos() -> SimpleNamespace:
    """The message classes by name, as the proxy worker's `protos` module offers them."""
    pool = descriptor_pool.DescriptorPool()
    for well_known in (duration_pb2, timestamp_pb2):
        pool.AddSerializedFile(well_known.DESCRIPTOR.serialized_pb)
    file = pool.Add(_Parser(SCHEMA).parse())
    return SimpleNamespace(
        **{name: GetMessageClass(d) for name, d in file.message_types_by_name.items()}
    )


protos = build_protos()
