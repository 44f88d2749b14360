//! The JSON-RPC framing `codex app-server` speaks on stdio: one JSON object per line,
//! **without** a `"jsonrpc": "2.0"` field (observed in 0.171.0). Our requests carry
//! integer ids counting from 1; the server's own requests carry ids of its own
//! (integers from 0), echoed back as given.

use serde_json::{json, Value};

/// JSON-RPC's "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's "invalid params".
pub const INVALID_PARAMS: i64 = -32602;

/// An error answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The code.
    pub code: i64,
    /// The message.
    pub message: String,
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

/// One message from the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to one of our requests.
    Response {
        /// Our request's id.
        id: u64,
        /// Its result or error.
        result: Result<Value, RpcError>,
    },
    /// The server asks something of us; it must be answered.
    Request {
        /// Its id, echoed in the answer.
        id: Value,
        /// The method.
        method: String,
        /// Its params.
        params: Value,
    },
    /// The server tells us something.
    Notification {
        /// The method.
        method: String,
        /// Its params.
        params: Value,
    },
}

/// Parses one line, or says why it is not a message (with the line's start).
pub fn parse(bytes: &[u8]) -> Result<Incoming, String> {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => match std::str::from_utf8(bytes) {
            Ok(_) => return Err(format!("not JSON ({e})")),
            Err(_) => serde_json::from_str(&String::from_utf8_lossy(bytes))
                .map_err(|e| format!("invalid UTF-8, and then not JSON ({e})"))?,
        },
    };
    classify(value)
}

/// Sorts a parsed JSON value into a message kind.
pub fn classify(mut value: Value) -> Result<Incoming, String> {
    let Some(obj) = value.as_object_mut() else {
        return Err("not a JSON object".into());
    };
    let params = obj.remove("params").unwrap_or(Value::Null);
    let method = obj.remove("method");
    let id = obj.remove("id");
    match (method, id) {
        (Some(Value::String(method)), Some(id)) if !id.is_null() => {
            Ok(Incoming::Request { id, method, params })
        }
        (Some(Value::String(method)), _) => Ok(Incoming::Notification { method, params }),
        (Some(_), _) => Err("`method` is not a string".into()),
        (None, Some(id)) => {
            let Some(id) = id.as_u64() else {
                return Err(format!("a response with an id we never sent: {id}"));
            };
            if let Some(err) = obj.remove("error") {
                return Ok(Incoming::Response {
                    id,
                    result: Err(RpcError {
                        code: err["code"].as_i64().unwrap_or(0),
                        message: err["message"]
                            .as_str()
                            .map_or_else(|| err.to_string(), String::from),
                    }),
                });
            }
            match obj.remove("result") {
                Some(result) => Ok(Incoming::Response {
                    id,
                    result: Ok(result),
                }),
                None => Err("a response with neither result nor error".into()),
            }
        }
        (None, None) => Err("neither a request, a response nor a notification".into()),
    }
}

fn line(value: Value) -> Vec<u8> {
    let mut out = value.to_string().into_bytes();
    out.push(b'\n');
    out
}

/// A request line.
pub fn request(id: u64, method: &str, params: Value) -> Vec<u8> {
    line(json!({"id": id, "method": method, "params": params}))
}

/// A notification line (no params when `params` is null).
pub fn notification(method: &str, params: Value) -> Vec<u8> {
    if params.is_null() {
        line(json!({"method": method}))
    } else {
        line(json!({"method": method, "params": params}))
    }
}

/// The answer to the server's request `id`.
pub fn response(id: &Value, result: Value) -> Vec<u8> {
    line(json!({"id": id, "result": result}))
}

/// An error answer to the server's request `id`.
pub fn error_response(id: &Value, code: i64, message: &str) -> Vec<u8> {
    line(json!({"id": id, "error": {"code": code, "message": message}}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_the_three_kinds_and_rejects_the_rest() {
        assert_eq!(
            parse(br#"{"id":3,"result":{"ok":true}}"#),
            Ok(Incoming::Response {
                id: 3,
                result: Ok(json!({"ok": true}))
            })
        );
        assert!(matches!(
            parse(br#"{"id":4,"error":{"code":-32600,"message":"bad"}}"#),
            Ok(Incoming::Response {
                id: 4,
                result: Err(RpcError { code: -32600, .. })
            })
        ));
        assert!(matches!(
            parse(br#"{"id":0,"method":"item/tool/requestUserInput","params":{}}"#),
            Ok(Incoming::Request { id, .. }) if id == json!(0)
        ));
        assert!(matches!(
            parse(br#"{"method":"turn/started","params":{"a":1},"emittedAtMs":1}"#),
            Ok(Incoming::Notification { method, .. }) if method == "turn/started"
        ));
        assert!(parse(b"not json").is_err());
        assert!(parse(b"[1,2]").is_err());
        assert!(parse(br#"{"id":"x","result":1}"#).is_err());
        assert!(parse(br#"{"hello":1}"#).is_err());
        assert!(matches!(
            parse(b"{\"method\":\"warning\",\"params\":{\"message\":\"a\xff\"}}"),
            Ok(Incoming::Notification { .. })
        ));
    }

    #[test]
    fn lines_end_in_newlines_and_echo_ids() {
        let req = request(1, "initialize", json!({}));
        assert!(req.ends_with(b"}\n"));
        assert_eq!(
            serde_json::from_slice::<Value>(&req).ok(),
            Some(json!({"id": 1, "method": "initialize", "params": {}}))
        );
        assert_eq!(
            notification("initialized", Value::Null),
            b"{\"method\":\"initialized\"}\n"
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&error_response(&json!(0), METHOD_NOT_FOUND, "no"))
                .ok(),
            Some(json!({"id": 0, "error": {"code": -32601, "message": "no"}}))
        );
    }
}
