package injection_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/controllers/injection"
)

// unsentReview is a POST to the webhook whose headers declare a body of
// n bytes and whose body is never sent (one byte of it is): what anything
// that reaches the webhook's port can do to make it hold a review.
type unsentReview struct{ conn *tls.Conn }

func holdReview(t *testing.T, query string, n int) *unsentReview {
	t.Helper()
	addr := net.JoinHostPort(webhookHost, strconv.Itoa(webhookPort))
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}}
	c, err := d.DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{",
		injection.InjectorPath, query, addr, n)
	return &unsentReview{conn: c.(*tls.Conn)}
}

// answer is the status line of the held review's answer, or why none came
// within 20 s.
func (u *unsentReview) answer() string {
	_ = u.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(u.conn).ReadString('\n')
	if err != nil {
		return "no answer: " + err.Error()
	}
	return strings.TrimSpace(line)
}

// reviewStatus posts a small review of a Pod naming no contract and
// returns the HTTP status.
func reviewStatus(t *testing.T) int {
	t.Helper()
	body := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},` +
		`"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE","namespace":"a","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}}}`
	url := "https://" + net.JoinHostPort(webhookHost, strconv.Itoa(webhookPort)) + injection.InjectorPath
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestInjectReviewBytesBounded is whoever reaches the webhook's port
// (anything on the Pod network, by default) posting made-up reviews:
// larger than any review of a Pod the API server admits, many at once, or
// with bodies that never arrive. The webhook refuses a review larger than
// DefaultMaxReviewBytes before reading it, holds at most
// DefaultReviewBytesInFlight of reviews at once (the rest are refused at
// once, 503: the API server then applies failurePolicy, and an ordinary
// Pod is admitted), and gives up on a body that has not arrived within
// the API server's timeout for the call. Today each made-up review of
// 7 MiB is read whole, as many at once as are sent and for as long as
// they take: a dozen hold more memory than the chart gives the operator.
func TestInjectReviewBytesBounded(t *testing.T) {
	needWebhook(t)
	if got := holdReview(t, "", injection.DefaultMaxReviewBytes+1).answer(); !strings.Contains(got, " 413 ") {
		t.Errorf("a review declaring more than %d bytes, its body not sent: %q, want 413 at once", injection.DefaultMaxReviewBytes, got)
	}

	// Two of the largest reviews, their bodies never sent, hold the bound.
	first := holdReview(t, "", injection.DefaultMaxReviewBytes)
	holdReview(t, "", injection.DefaultReviewBytesInFlight-injection.DefaultMaxReviewBytes)
	status := 0
	for range 200 {
		if status = reviewStatus(t); status == http.StatusServiceUnavailable {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if status != http.StatusServiceUnavailable {
		t.Fatalf("a review while the reviews in flight hold the bound: %d, want 503 at once", status)
	}
	// A held review that ends gives its bytes back.
	first.conn.Close()
	for range 200 {
		if status = reviewStatus(t); status == http.StatusOK {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if status != http.StatusOK {
		t.Errorf("a review once a held one ended: %d, want 200", status)
	}

	// A body that does not arrive within the call's timeout is given up.
	slow := holdReview(t, "?timeout=1s", 64<<10)
	// (controller-runtime answers a body it could not read with an
	// Errored review; the API server would never send one.)
	if got := slow.answer(); strings.Contains(got, "i/o timeout") {
		t.Errorf("a review whose body never arrives, the call's timeout 1s: %q after 20s, want it given up", got)
	}
}

// postReviewTo sends review to the webhook on port, as postReview does.
func postReviewTo(t *testing.T, port string, review *admissionv1.AdmissionReview) (*admissionv1.AdmissionResponse, error) {
	t.Helper()
	body, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	url := "https://" + net.JoinHostPort(webhookHost, port) + injection.InjectorPath
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Response == nil {
		return nil, fmt.Errorf("status %d: not an AdmissionReview answer: %w", resp.StatusCode, err)
	}
	return out.Response, nil
}

// TestInjectAPIReadsBounded is whoever reaches the webhook's port posting
// made-up reviews for Pods naming contracts that do not exist: the cache
// has none, and each was read again from the API server, as the
// operator's own identity, in the API server's flow of its reconciling
// and leader election. Those reads are bounded (rate and burst); past the
// bound the cache's answer stands, and the Pod is admitted as for a
// contract that does not exist. Today every made-up review is a GET.
func TestInjectAPIReadsBounded(t *testing.T) {
	needWebhook(t)
	ns := suite.NewNamespace(t)
	var gets atomic.Int64
	cfg := rest.CopyConfig(suite.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: operatorUser}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/servicecontracts/") {
				gets.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	live, err := client.New(cfg, client.Options{Scheme: suite.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	label := startOperator(t, operatorUser, &injection.Injector{Options: injection.SidecarOptions{Image: sidecarImage, PlainHTTP: true},
		APIReader: live, APIReadRate: 0.001, APIReadBurst: 5})
	port := strings.TrimPrefix(label["test.kubepact.dev/operator"], "op-")
	made := func(name string) *admissionv1.AdmissionReview {
		p := restrictedPod(ns, "made-up", map[string]string{injection.AnnotationContract: name})
		p.GenerateName, p.Name = "made-up-", ""
		return handMadeReview(t, ns, p)
	}
	// The webhook answers once its server is up.
	for deadline := time.Now().Add(60 * time.Second); ; {
		if _, err := postReviewTo(t, port, made("warm-up")); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the other operator's webhook never answered: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	before := gets.Load()
	for i := range 50 {
		resp, err := postReviewTo(t, port, made(fmt.Sprintf("no-such-contract-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Allowed || len(resp.Patch) > 0 || !strings.Contains(strings.Join(resp.Warnings, " "), "does not exist") {
			t.Fatalf("made-up review %d: allowed=%v, warnings %q; want admitted, saying the contract does not exist", i, resp.Allowed, resp.Warnings)
		}
	}
	if n := gets.Load() - before; n > 4 {
		t.Errorf("50 made-up reviews naming contracts that do not exist: %d reads from the API server, want at most the 4 left of the burst", n)
	}
}
