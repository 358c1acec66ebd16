// Package gateway runs catraca's CloudFront Function and a CloudFront-like
// cache in front of the local stack, so every local request passes through
// the same edge code as in AWS (the function source is embedded from edge/).
package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/dop251/goja"
)

// Request is the request part of a CloudFront viewer-request event.
type Request struct {
	Method      string           `json:"method"`
	URI         string           `json:"uri"`
	QueryString map[string]Value `json:"querystring"`
	Headers     map[string]Value `json:"headers"`
	Cookies     map[string]Value `json:"cookies"`
}

// Value is one header, cookie or query value; MultiValue holds repeats.
type Value struct {
	Value      string  `json:"value"`
	MultiValue []Value `json:"multiValue,omitempty"`
}

// Response is what the function returns when it answers by itself.
type Response struct {
	StatusCode int
	Headers    map[string]string
	Body       string
}

// Result is either the (possibly rewritten) request or a response.
type Result struct {
	Request  *Request
	Response *Response
}

// Function is a loaded CloudFront Function. Runtimes are not safe for
// concurrent use, so each call borrows one from a pool.
type Function struct {
	prog *goja.Program
	kvs  *KVS
	pool sync.Pool
}

var imports = regexp.MustCompile(`(?m)^import (cf from 'cloudfront'|crypto from 'crypto');$`)

// Load compiles a CloudFront Function source. Its module imports are bound
// to Go stand-ins of the CloudFront runtime: the KeyValueStore, HMAC and
// the Buffer conversions the code uses.
func Load(name, src string, kvs *KVS) (*Function, error) {
	prog, err := goja.Compile(name, imports.ReplaceAllString(src, ""), true)
	if err != nil {
		return nil, fmt.Errorf("compile %s: %w", name, err)
	}
	f := &Function{prog: prog, kvs: kvs}
	if _, err := f.runtime(); err != nil {
		return nil, err
	}
	return f, nil
}

type instance struct {
	vm      *goja.Runtime
	handler goja.Callable
}

func (f *Function) runtime() (*instance, error) {
	if in, ok := f.pool.Get().(*instance); ok {
		return in, nil
	}
	vm := goja.New()
	vm.SetFieldNameMapper(goja.TagFieldNameMapper("json", true))
	for name, v := range map[string]any{"cf": f.cloudfront(vm), "crypto": cryptoModule(vm), "Buffer": bufferModule(vm)} {
		if err := vm.Set(name, v); err != nil {
			return nil, err
		}
	}
	if _, err := vm.RunProgram(f.prog); err != nil {
		return nil, fmt.Errorf("run function: %w", err)
	}
	h, ok := goja.AssertFunction(vm.Get("handler"))
	if !ok {
		return nil, errors.New("edge function defines no handler")
	}
	return &instance{vm: vm, handler: h}, nil
}

// Run calls the handler with a viewer-request event.
func (f *Function) Run(req Request, viewerIP string) (Result, error) {
	in, err := f.runtime()
	if err != nil {
		return Result{}, err
	}
	defer f.pool.Put(in)
	ev := map[string]any{
		"version": "1.0",
		// CloudFront names every viewer request (requestId, x-amz-cf-id).
		"context": map[string]any{"eventType": "viewer-request", "distributionDomainName": "localhost", "requestId": rand.Text()},
		"viewer":  map[string]any{"ip": viewerIP},
		"request": requestObject(in.vm, req),
	}
	v, err := in.handler(goja.Undefined(), in.vm.ToValue(ev))
	if err != nil {
		return Result{}, fmt.Errorf("edge function: %w", err)
	}
	if p, ok := v.Export().(*goja.Promise); ok {
		switch p.State() {
		case goja.PromiseStateRejected:
			return Result{}, fmt.Errorf("edge function rejected: %v", p.Result())
		case goja.PromiseStatePending:
			return Result{}, errors.New("edge function did not settle")
		}
		v = p.Result()
	}
	return decode(in.vm, v.ToObject(in.vm))
}

// requestObject builds plain JS objects (not Go wrappers) so the function
// may add, delete and enumerate keys as on CloudFront.
func requestObject(vm *goja.Runtime, req Request) goja.Value {
	values := func(m map[string]Value) *goja.Object {
		o := vm.NewObject()
		for k, v := range m {
			e := vm.NewObject()
			e.Set("value", v.Value)
			if len(v.MultiValue) > 0 {
				mv := make([]any, len(v.MultiValue))
				for i, x := range v.MultiValue {
					xo := vm.NewObject()
					xo.Set("value", x.Value)
					mv[i] = xo
				}
				e.Set("multiValue", vm.NewArray(mv...))
			}
			o.Set(k, e)
		}
		return o
	}
	o := vm.NewObject()
	o.Set("method", req.Method)
	o.Set("uri", req.URI)
	o.Set("querystring", values(req.QueryString))
	o.Set("headers", values(req.Headers))
	o.Set("cookies", values(req.Cookies))
	return o
}

func decode(vm *goja.Runtime, o *goja.Object) (Result, error) {
	if sc := o.Get("statusCode"); sc != nil && !goja.IsUndefined(sc) {
		resp := &Response{StatusCode: int(sc.ToInteger()), Headers: map[string]string{}}
		if hs := o.Get("headers"); hs != nil && !goja.IsUndefined(hs) {
			ho := hs.ToObject(vm)
			for _, k := range ho.Keys() {
				resp.Headers[k] = ho.Get(k).ToObject(vm).Get("value").String()
			}
		}
		if b := o.Get("body"); b != nil && !goja.IsUndefined(b) {
			if bo, ok := b.(*goja.Object); ok && bo.Get("data") != nil {
				resp.Body = bo.Get("data").String()
			} else {
				resp.Body = b.String()
			}
		}
		return Result{Response: resp}, nil
	}
	var req Request
	if err := vm.ExportTo(o, &req); err != nil {
		return Result{}, fmt.Errorf("edge function returned a bad request: %w", err)
	}
	return Result{Request: &req}, nil
}

func (f *Function) cloudfront(vm *goja.Runtime) map[string]any {
	settle := func(v any, err error) goja.Value {
		p, resolve, reject := vm.NewPromise()
		if err != nil {
			reject(vm.NewGoError(err))
		} else {
			resolve(v)
		}
		return vm.ToValue(p)
	}
	handle := map[string]any{
		"get": func(key string) goja.Value { return settle(f.kvs.Get(key)) },
		"exists": func(key string) goja.Value {
			_, err := f.kvs.Get(key)
			return settle(err == nil, nil)
		},
	}
	return map[string]any{"kvs": func() map[string]any { return handle }}
}

// buffer is the part of CloudFront's Buffer the function uses.
type buffer struct{ b []byte }

func bufferModule(vm *goja.Runtime) map[string]any {
	return map[string]any{"from": func(s, enc string) (goja.Value, error) {
		b, err := decodeString(s, enc)
		if err != nil {
			return nil, err
		}
		o := vm.NewObject()
		o.Set("toString", func() string { return string(b) })
		o.Set("__bytes", vm.ToValue(&buffer{b}))
		return o, nil
	}}
}

func decodeString(s, enc string) ([]byte, error) {
	switch enc {
	case "base64url":
		return base64.RawURLEncoding.DecodeString(trimPad(s))
	case "base64":
		return base64.StdEncoding.DecodeString(s)
	case "hex":
		return hex.DecodeString(s)
	case "", "utf8", "utf-8":
		return []byte(s), nil
	}
	return nil, fmt.Errorf("buffer: unsupported encoding %q", enc)
}

func trimPad(s string) string {
	for len(s) > 0 && s[len(s)-1] == '=' {
		s = s[:len(s)-1]
	}
	return s
}

func cryptoModule(vm *goja.Runtime) map[string]any {
	return map[string]any{"createHmac": func(alg string, key goja.Value) (*goja.Object, error) {
		if alg != "sha256" {
			return nil, fmt.Errorf("crypto: unsupported hmac %q", alg)
		}
		var k []byte
		if ko, ok := key.(*goja.Object); ok {
			if b, ok := ko.Get("__bytes").Export().(*buffer); ok {
				k = b.b
			}
		}
		if k == nil {
			k = []byte(key.String())
		}
		mac := hmac.New(sha256.New, k)
		o := vm.NewObject()
		o.Set("update", func(s string) *goja.Object { mac.Write([]byte(s)); return o })
		o.Set("digest", func(enc string) (string, error) {
			sum := mac.Sum(nil)
			switch enc {
			case "base64url":
				return base64.RawURLEncoding.EncodeToString(sum), nil
			case "base64":
				return base64.StdEncoding.EncodeToString(sum), nil
			case "hex":
				return hex.EncodeToString(sum), nil
			}
			return "", fmt.Errorf("crypto: unsupported digest encoding %q", enc)
		})
		return o, nil
	}}
}
