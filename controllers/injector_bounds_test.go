package controllers_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubepact/kubepact/controllers"
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
		controllers.InjectorPath, query, addr, n)
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
	url := "https://" + net.JoinHostPort(webhookHost, strconv.Itoa(webhookPort)) + controllers.InjectorPath
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
	if got := holdReview(t, "", controllers.DefaultMaxReviewBytes+1).answer(); !strings.Contains(got, " 413 ") {
		t.Errorf("a review declaring more than %d bytes, its body not sent: %q, want 413 at once", controllers.DefaultMaxReviewBytes, got)
	}

	// Two of the largest reviews, their bodies never sent, hold the bound.
	first := holdReview(t, "", controllers.DefaultMaxReviewBytes)
	holdReview(t, "", controllers.DefaultReviewBytesInFlight-controllers.DefaultMaxReviewBytes)
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
