// probe: the small static program the harness's node tests run in pods (image built from this binary
// alone, no libc). Standard library only.
//
//	probe serve <port>   HTTP on :<port>; every path answers "hello from <hostname>\n" (200)
//	probe get <url>      GET <url>; prints the status line and the body; exit 0 on any HTTP answer
//	probe kube <path>    GET https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT<path> with the pod's
//	                     ServiceAccount token, verifying the API server against the mounted ca.crt
//	probe sleep          waits for SIGTERM
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	if len(os.Args) < 2 {
		fail("usage: probe serve <port> | get <url> | kube <path> | sleep")
	}
	switch os.Args[1] {
	case "serve":
		arg(3)
		host, _ := os.Hostname()
		http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintf(w, "hello from %s\n", host) })
		srv := &http.Server{Addr: ":" + os.Args[2], ReadHeaderTimeout: 10 * time.Second}
		go func() {
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
			<-sigs
			os.Exit(0)
		}()
		fmt.Printf("serving on :%s\n", os.Args[2])
		fail(srv.ListenAndServe().Error())
	case "get":
		arg(3)
		get(&http.Client{Timeout: 10 * time.Second}, os.Args[2], "")
	case "kube":
		arg(3)
		ca, err := os.ReadFile(saDir + "/ca.crt")
		check(err)
		token, err := os.ReadFile(saDir + "/token")
		check(err)
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			fail("no certificate in " + saDir + "/ca.crt")
		}
		host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
		if host == "" || port == "" {
			fail("KUBERNETES_SERVICE_HOST/PORT not set")
		}
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		get(c, "https://"+net.JoinHostPort(host, port)+os.Args[2], strings.TrimSpace(string(token)))
	case "sleep":
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
		<-sigs
	default:
		fail("unknown command " + os.Args[1])
	}
}

func get(c *http.Client, url, token string) {
	fmt.Printf("GET %s\n", url)
	req, err := http.NewRequest(http.MethodGet, url, nil)
	check(err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	check(err)
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	check(err)
	fmt.Printf("status %d\n%s\n", res.StatusCode, body)
}

func arg(n int) {
	if len(os.Args) < n {
		fail("missing argument for " + os.Args[1])
	}
}

func check(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "probe: "+msg)
	os.Exit(1)
}
