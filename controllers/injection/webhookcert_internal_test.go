package injection

import (
	"crypto/x509"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestCertAdvance walks the rotator's state machine on a clock it sets:
// what each step writes into the Secret, read back as the next step would.
func TestCertAdvance(t *testing.T) {
	o := CertOptions{CAOverlap: 10 * time.Minute, CheckInterval: time.Minute, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}.withDefaults()
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &CertRotator{Options: o, now: func() time.Time { return now }}
	secret := &corev1.Secret{}
	// step advances once and round-trips the state through the Secret.
	step := func(force bool) (*certState, bool) {
		t.Helper()
		st := parseCertState(secret)
		changed, err := r.advance(st, force)
		if err != nil {
			t.Fatal(err)
		}
		writeCertState(secret, st)
		return parseCertState(secret), changed
	}
	trusts := func(st *certState, ca *x509.Certificate) bool {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(secret.Data[keyCABundle])
		_, err := st.serving.cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now})
		return err == nil && st.serving.cert.CheckSignatureFrom(ca) == nil
	}

	st, changed := step(false)
	if !changed || st.ca == nil || st.serving == nil || st.next != nil || st.prev != nil {
		t.Fatalf("first step: changed=%v state=%+v, want a CA and a serving certificate", changed, st)
	}
	first := st.ca.cert
	if !trusts(st, first) {
		t.Fatal("the serving certificate does not verify against caBundle")
	}
	if _, changed := step(false); changed {
		t.Error("a second step with nothing due changed the Secret")
	}

	// A forced rotation: a new serving certificate at once, and a new CA
	// trusted but not signing yet.
	servingBefore := st.serving.cert.SerialNumber
	st, _ = step(true)
	if st.next == nil || st.ca.cert.Equal(st.next.cert) || !st.ca.cert.Equal(first) {
		t.Fatalf("forced: want the old CA signing and a new one staged; got %+v", st)
	}
	if st.serving.cert.SerialNumber.Cmp(servingBefore) == 0 || !trusts(st, first) {
		t.Error("forced: the serving certificate was not reissued by the current CA")
	}
	staged := st.next.cert

	// Before the overlap passes nothing moves; after it the new CA signs and
	// the old one stays trusted for one more overlap.
	now = now.Add(o.CAOverlap - time.Second)
	if _, changed := step(false); changed {
		t.Error("the staged CA was promoted before CAOverlap")
	}
	now = now.Add(time.Second)
	st, _ = step(false)
	if !st.ca.cert.Equal(staged) || st.prev == nil || !st.prev.Equal(first) || !trusts(st, staged) {
		t.Fatalf("after CAOverlap: want the staged CA signing and the old one still trusted; got %+v", st)
	}
	now = now.Add(o.CAOverlap)
	st, _ = step(false)
	if st.prev != nil || string(secret.Data[keyCABundle]) != string(st.ca.certPEM) {
		t.Errorf("after another CAOverlap the old CA is still trusted: %s", secret.Data[keyCABundle])
	}

	// Renewal before expiry, with no one asking.
	now = st.serving.cert.NotAfter.Add(-o.RenewBefore - time.Hour)
	if _, changed := step(false); changed {
		t.Error("renewed more than RenewBefore ahead")
	}
	now = now.Add(2 * time.Hour)
	servingBefore = st.serving.cert.SerialNumber
	st, _ = step(false)
	if st.serving.cert.SerialNumber.Cmp(servingBefore) == 0 || !st.serving.cert.NotAfter.After(now.Add(o.RenewBefore)) {
		t.Error("the serving certificate was not renewed within RenewBefore of its expiry")
	}

	// New names, a new certificate.
	r.Options.DNSNames = []string{"kubepact-webhook.elsewhere.svc"}
	st, _ = step(false)
	if len(st.serving.cert.DNSNames) != 1 || st.serving.cert.DNSNames[0] != "kubepact-webhook.elsewhere.svc" {
		t.Errorf("names %v after they changed", st.serving.cert.DNSNames)
	}

	// A Secret someone broke is started over, not served.
	secret.Data[keyCAKey] = []byte("garbage")
	st, changed = step(false)
	if !changed || st.ca.cert.Equal(staged) || !trusts(st, st.ca.cert) {
		t.Error("an unreadable CA key was not replaced with a fresh CA")
	}

	// A CA near its end is replaced in the same two phases, unasked.
	now = st.ca.cert.NotAfter.Add(-o.RenewBefore + time.Hour)
	st, _ = step(false)
	if st.next == nil {
		t.Error("a CA within RenewBefore of its expiry was not replaced")
	}
}

func TestCertOptionsValidate(t *testing.T) {
	for name, o := range map[string]CertOptions{
		"renew before exceeds validity":   {CertValidity: time.Hour, RenewBefore: 2 * time.Hour},
		"serving outlives the CA":         {CAValidity: time.Hour, CertValidity: 2 * time.Hour, RenewBefore: time.Minute},
		"overlap shorter than the checks": {CAOverlap: time.Second, CheckInterval: time.Minute},
	} {
		if err := o.withDefaults().validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
