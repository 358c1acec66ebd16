package gateway

import (
	"bytes"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/catraca/catraca/edge"
	"github.com/catraca/catraca/shared/problem"
)

// Gateway is CloudFront for the local stack: the viewer-request function,
// the cache behaviors of edge.Behaviors, the security headers of the
// response-headers policy, the API origin and the site bucket.
type Gateway struct {
	fn      *Function
	cache   *Cache
	api     http.Handler
	site    fs.FS
	headers map[string]string
	log     *slog.Logger
}

// New returns a gateway in front of api, serving the embedded web app.
func New(kvs *KVS, api http.Handler, log *slog.Logger) (*Gateway, error) {
	fn, err := Load("viewer-request.js", edge.FunctionSource(), kvs)
	if err != nil {
		return nil, err
	}
	return &Gateway{fn: fn, cache: NewCache(), api: api, site: edge.Web(), headers: edge.SecurityHeaders(), log: log}, nil
}

func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range g.headers {
		w.Header().Set(k, v)
	}
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	res, err := g.fn.Run(viewerRequest(r), ip)
	if err != nil {
		// CloudFront answers 503 when a function fails; so do we.
		g.log.Error("edge function failed", "err", err, "path", r.URL.Path)
		problem.Write(w, r, problem.New(http.StatusServiceUnavailable, "edge-function-error", "The edge could not process this request."))
		return
	}
	if res.Response != nil {
		for k, v := range res.Response.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(res.Response.StatusCode)
		w.Write([]byte(res.Response.Body))
		return
	}
	apply(r, res.Request)
	// CloudFront adds the viewer's address for the origin, replacing any
	// the viewer sent; the API's per-address limits read it.
	r.Header.Set("CloudFront-Viewer-Address", r.RemoteAddr)
	b := edge.Match(r.URL.Path)
	origin := g.api
	if b.Origin == "site" {
		origin = http.HandlerFunc(g.serveSite)
	} else {
		signForOAC(r)
	}
	if !b.Cached || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		origin.ServeHTTP(w, r)
		return
	}
	// Cached behaviors key on path and query only and forward nothing else.
	r.Header.Del("Cookie")
	r.Header.Del("Authorization")
	g.cache.Serve(w, r, cacheKey(r), b.MinTTL, b.MaxTTL, b.DefaultTTL, origin)
}

// signForOAC does to an API request what CloudFront's origin access
// control does with signing behaviour "always": it signs the request for
// Lambda with SigV4, overwriting any Authorization the viewer sent. (The
// signature here is a stand-in: the local API does not check it.)
func signForOAC(r *http.Request) {
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=LOCALOAC/20260101/local/lambda/aws4_request, SignedHeaders=host;x-amz-date, Signature=0")
}

// cacheKey is path and query plus the encoding the viewer accepts,
// normalized to gzip or identity as CloudFront does when compression is on:
// the origin compresses by Accept-Encoding, so one key must not serve both.
func cacheKey(r *http.Request) string {
	enc := "identity"
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		enc = "gzip"
	}
	return r.Method + " " + r.URL.RequestURI() + " " + enc
}

// viewerRequest turns an HTTP request into the CloudFront event shape.
func viewerRequest(r *http.Request) Request {
	req := Request{Method: r.Method, URI: r.URL.Path, QueryString: map[string]Value{}, Headers: map[string]Value{}, Cookies: map[string]Value{}}
	// Names and values stay as sent, percent-escapes and all, as in
	// CloudFront's event: decoding here dropped a pair Go cannot decode
	// (?limit=%zz), so the API never saw the malformed query it refuses.
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		if pair == "" {
			continue
		}
		k, x, _ := strings.Cut(pair, "=")
		v, seen := req.QueryString[k]
		switch {
		case !seen:
			v = Value{Value: x}
		case len(v.MultiValue) == 0:
			v.MultiValue = []Value{{Value: v.Value}, {Value: x}}
		default:
			v.MultiValue = append(v.MultiValue, Value{Value: x})
		}
		req.QueryString[k] = v
	}
	for k, vs := range r.Header {
		if k != "Cookie" {
			req.Headers[strings.ToLower(k)] = Value{Value: strings.Join(vs, ",")}
		}
	}
	for _, c := range r.Cookies() {
		req.Cookies[c.Name] = Value{Value: c.Value}
	}
	return req
}

// apply carries the function's rewrites (path, query, added and deleted
// headers) back.
func apply(r *http.Request, fr *Request) {
	r.URL.Path, r.URL.RawPath = fr.URI, ""
	var q []string
	for _, k := range slices.Sorted(maps.Keys(fr.QueryString)) {
		v := fr.QueryString[k]
		if len(v.MultiValue) == 0 {
			q = append(q, k+"="+v.Value)
		}
		for _, x := range v.MultiValue {
			q = append(q, k+"="+x.Value)
		}
	}
	r.URL.RawQuery = strings.Join(q, "&")
	r.RequestURI = r.URL.RequestURI()
	for k, v := range fr.Headers {
		if r.Header.Get(k) == "" {
			r.Header.Set(k, v.Value)
		}
	}
	// A header the function deleted does not reach the origin.
	for k := range r.Header {
		if _, kept := fr.Headers[strings.ToLower(k)]; !kept && k != "Cookie" {
			r.Header.Del(k)
		}
	}
}

// serveSite is the S3 origin: files with the Cache-Control the deployment
// sets (the app shell revalidates, assets are cached for a day).
func (g *Gateway) serveSite(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	b, err := fs.ReadFile(g.site, name)
	if err != nil {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden) // what S3 behind OAC answers for a missing key
		w.Write([]byte("<Error><Code>AccessDenied</Code></Error>"))
		return
	}
	w.Header().Set("Cache-Control", edge.SiteCacheControl(name))
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}
