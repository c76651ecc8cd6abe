package servicecheck

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The cost of one check run against a loopback server, which at 1,000 checks per node and
// their interval gives the checks' CPU share: run with -bench . -benchtime and divide.
func BenchmarkCheckRun(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, spec := range []Spec{
		{Name: "http", Type: TypeHTTP, Address: "127.0.0.1", Port: port, Path: "/", Timeout: time.Second},
		{Name: "tcp", Type: TypeTCP, Address: "127.0.0.1", Port: port, Timeout: time.Second},
	} {
		b.Run(spec.Name, func(b *testing.B) {
			hc := spec.httpClient()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if r := spec.run(context.Background(), nil, hc); r.status != StatusSuccess {
					b.Fatalf("check failed: %s", r.output)
				}
			}
		})
	}
}
