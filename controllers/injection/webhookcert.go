package injection

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// What the certificate rotator may touch, and no more: one Secret in the
// operator's namespace (created once, then read and updated by name) and
// one MutatingWebhookConfiguration, by name.
//
// +kubebuilder:rbac:groups="",namespace=kubepact-system,resources=secrets,verbs=create
// +kubebuilder:rbac:groups="",namespace=kubepact-system,resources=secrets,resourceNames=kubepact-webhook-cert,verbs=get;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kubepact-injector,verbs=get;update

// Keys of the certificate Secret besides tls.crt and tls.key (the serving
// certificate), and its annotations recording the CA's phases.
const (
	keyCA            = "ca.crt"
	keyCAKey         = "ca.key"
	keyNextCA        = "next-ca.crt"
	keyNextCAKey     = "next-ca.key"
	keyPrevCA        = "previous-ca.crt"
	keyCABundle      = "ca-bundle.crt"
	annotationStaged = "kubepact.dev/next-ca-staged-at"
	annotationPromo  = "kubepact.dev/ca-promoted-at"
)

// CertOptions configure the webhook's self-managed certificates. Zero
// fields take the defaults DefaultCertOptions has.
type CertOptions struct {
	// SecretName and Namespace name the Secret holding the CA and the
	// serving certificate.
	SecretName, Namespace string
	// WebhookConfigName names the MutatingWebhookConfiguration whose
	// caBundle is kept in step.
	WebhookConfigName string
	// DNSNames and IPAddresses are the serving certificate's names (by
	// default the webhook Service's DNS names).
	DNSNames    []string
	IPAddresses []net.IP
	// CAValidity and CertValidity are the lifetimes of new certificates;
	// each is renewed when less than RenewBefore of it is left.
	CAValidity, CertValidity, RenewBefore time.Duration
	// CAOverlap is how long a new CA is trusted (in caBundle) before it
	// signs the serving certificate, and how long the old one stays trusted
	// after: longer than CheckInterval, so every replica has switched.
	CAOverlap time.Duration
	// CheckInterval is how often the Secret is read again (rotations by
	// another replica are picked up then).
	CheckInterval time.Duration
}

// DefaultCertOptions returns the defaults for a webhook Service
// kubepact-webhook in kubepact-system.
func DefaultCertOptions() CertOptions {
	return CertOptions{
		SecretName:        "kubepact-webhook-cert",
		Namespace:         "kubepact-system",
		WebhookConfigName: "kubepact-injector",
		CAValidity:        5 * 365 * 24 * time.Hour,
		CertValidity:      365 * 24 * time.Hour,
		RenewBefore:       30 * 24 * time.Hour,
		CAOverlap:         5 * time.Minute,
		CheckInterval:     time.Minute,
	}
}

func (o CertOptions) withDefaults() CertOptions {
	d := DefaultCertOptions()
	o.SecretName = cmp.Or(o.SecretName, d.SecretName)
	o.Namespace = cmp.Or(o.Namespace, d.Namespace)
	o.WebhookConfigName = cmp.Or(o.WebhookConfigName, d.WebhookConfigName)
	o.CAValidity = cmp.Or(o.CAValidity, d.CAValidity)
	o.CertValidity = cmp.Or(o.CertValidity, d.CertValidity)
	o.RenewBefore = cmp.Or(o.RenewBefore, d.RenewBefore)
	o.CAOverlap = cmp.Or(o.CAOverlap, d.CAOverlap)
	o.CheckInterval = cmp.Or(o.CheckInterval, d.CheckInterval)
	if len(o.DNSNames) == 0 && len(o.IPAddresses) == 0 {
		svc := "kubepact-webhook." + o.Namespace + ".svc"
		o.DNSNames = []string{svc, svc + ".cluster.local"}
	}
	return o
}

// validate checks that the lifetimes leave room to renew and the overlap
// outlasts a check.
func (o CertOptions) validate() error {
	switch {
	case o.RenewBefore >= o.CertValidity:
		return fmt.Errorf("CertOptions.RenewBefore (%s) must be shorter than CertValidity (%s)", o.RenewBefore, o.CertValidity)
	case o.CertValidity > o.CAValidity:
		return fmt.Errorf("CertOptions.CertValidity (%s) must not exceed CAValidity (%s)", o.CertValidity, o.CAValidity)
	case o.CAOverlap <= o.CheckInterval:
		return fmt.Errorf("CertOptions.CAOverlap (%s) must be longer than CheckInterval (%s), so every replica switches within it", o.CAOverlap, o.CheckInterval)
	}
	return nil
}

// CertRotator keeps the webhook's CA and serving certificate in a Secret it
// owns, renews them before they expire, keeps the caBundle of the webhook
// configuration in step, and hands the serving certificate to the webhook
// server (TLSConfig). It is a manager Runnable that runs on every replica;
// replicas share the Secret, and a conflicting write is retried after
// reading the winner's.
//
// A CA is replaced in two phases so that admissions never fail: the new CA
// is first only trusted (added to caBundle), and signs the serving
// certificate CAOverlap later; the old one stays trusted for CAOverlap
// more.
type CertRotator struct {
	// APIReader reads the Secret and the webhook configuration (no cache:
	// the operator watches neither).
	APIReader client.Reader
	// Client writes them.
	Client client.Client
	// Options configure names, lifetimes and intervals.
	Options CertOptions

	current atomic.Pointer[tls.Certificate]
	patched atomic.Bool
	rotate  chan struct{}
	init    atomic.Bool
	now     func() time.Time
}

func (r *CertRotator) setup() {
	if r.init.CompareAndSwap(false, true) {
		r.rotate = make(chan struct{}, 1)
		if r.now == nil {
			r.now = time.Now
		}
		r.Options = r.Options.withDefaults()
	}
}

// NeedLeaderElection is false: every replica serves the webhook.
func (r *CertRotator) NeedLeaderElection() bool { return false }

// Rotate asks for a new serving certificate and a new CA now (the CA in
// its two phases).
func (r *CertRotator) Rotate() {
	r.setup()
	select {
	case r.rotate <- struct{}{}:
	default:
	}
}

// GetCertificate serves the current certificate to the webhook server.
func (r *CertRotator) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := r.current.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("the webhook's serving certificate is not ready yet")
}

// TLSConfig is for webhook.Options.TLSOpts.
func (r *CertRotator) TLSConfig(cfg *tls.Config) { cfg.GetCertificate = r.GetCertificate }

// Ready is a readiness check: ready once a serving certificate is loaded and
// its CA is in the webhook configuration's caBundle.
func (r *CertRotator) Ready(*http.Request) error {
	if r.current.Load() == nil {
		return errors.New("no serving certificate yet")
	}
	if !r.patched.Load() {
		return fmt.Errorf("the caBundle of MutatingWebhookConfiguration %s is not up to date yet", r.Options.WebhookConfigName)
	}
	return nil
}

// Start keeps the certificates until ctx ends.
func (r *CertRotator) Start(ctx context.Context) error {
	r.setup()
	if err := r.Options.validate(); err != nil {
		return err
	}
	log := logf.FromContext(ctx).WithName("webhook-cert")
	force := false
	backoff := time.Duration(0)
	for {
		retry := r.Options.CheckInterval
		if err := r.sync(ctx, force); err != nil {
			// Soon at first (a conflict with another replica), then less
			// often (no webhook configuration yet), never past the interval.
			backoff = min(max(2*backoff, 100*time.Millisecond), retry)
			retry = backoff
			log.Error(err, "Keeping the webhook certificate", "retryIn", retry)
		} else {
			force, backoff = false, 0
		}
		t := time.NewTimer(retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-r.rotate:
			force = true
		case <-t.C:
		}
		t.Stop()
	}
}

// certState is the Secret's content, parsed.
type certState struct {
	ca, next        *keyPair
	prev            *x509.Certificate
	serving         *keyPair
	stagedAt, promo time.Time
}

type keyPair struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

// sync brings the Secret, the caBundle and the served certificate in step
// once.
func (r *CertRotator) sync(ctx context.Context, force bool) error {
	o := r.Options
	key := client.ObjectKey{Namespace: o.Namespace, Name: o.SecretName}
	secret := &corev1.Secret{}
	exists := true
	if err := r.APIReader.Get(ctx, key, secret); apierrors.IsNotFound(err) {
		exists = false
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.SecretName,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "kubepact"}},
			Type: corev1.SecretTypeTLS,
		}
	} else if err != nil {
		return fmt.Errorf("reading Secret %s: %w", key, err)
	}
	st := parseCertState(secret)
	changed, err := r.advance(st, force)
	if err != nil {
		return err
	}
	if changed || !exists {
		writeCertState(secret, st)
		if exists {
			err = r.Client.Update(ctx, secret)
		} else {
			err = r.Client.Create(ctx, secret)
		}
		if err != nil {
			// Another replica wrote first: take its state on the next try.
			return fmt.Errorf("writing Secret %s: %w", key, err)
		}
		logf.FromContext(ctx).Info("Wrote the webhook certificate", "secret", key,
			"servingNotAfter", st.serving.cert.NotAfter, "ca", st.ca.cert.Subject.CommonName, "nextCA", st.next != nil)
	}
	if err := r.patchCABundle(ctx, secret.Data[keyCABundle]); err != nil {
		return err
	}
	cert, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return fmt.Errorf("loading the serving certificate: %w", err)
	}
	r.current.Store(&cert)
	return nil
}

// advance moves the state one step: stage a new CA when the current one
// nears expiry (or on demand), promote a staged one after CAOverlap, drop
// the previous one CAOverlap after that, and issue a serving certificate
// when there is none, it nears expiry, its names changed, or on demand.
func (r *CertRotator) advance(st *certState, force bool) (bool, error) {
	o, now := r.Options, r.now()
	changed := false
	if st.ca == nil {
		ca, err := newCA(now, o.CAValidity)
		if err != nil {
			return false, err
		}
		*st = certState{ca: ca}
		changed = true
	}
	if st.next == nil && (force || now.Add(o.RenewBefore).After(st.ca.cert.NotAfter)) {
		next, err := newCA(now, o.CAValidity)
		if err != nil {
			return false, err
		}
		st.next, st.stagedAt, changed = next, now, true
	}
	if st.next != nil && !now.Before(st.stagedAt.Add(o.CAOverlap)) {
		st.prev, st.ca, st.next, st.promo, st.serving, changed = st.ca.cert, st.next, nil, now, nil, true
	}
	if st.prev != nil && (!now.Before(st.promo.Add(o.CAOverlap)) || now.After(st.prev.NotAfter)) {
		st.prev, changed = nil, true
	}
	if force || st.serving == nil || st.serving.cert.CheckSignatureFrom(st.ca.cert) != nil ||
		now.Add(o.RenewBefore).After(st.serving.cert.NotAfter) || !sameNames(st.serving.cert, o) {
		s, err := newServingCert(now, o, st.ca)
		if err != nil {
			return false, err
		}
		st.serving, changed = s, true
	}
	return changed, nil
}

func (r *CertRotator) patchCABundle(ctx context.Context, bundle []byte) error {
	name := r.Options.WebhookConfigName
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, mwc); err != nil {
		r.patched.Store(false)
		return fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", name, err)
	}
	changed := false
	for i := range mwc.Webhooks {
		if !bytes.Equal(mwc.Webhooks[i].ClientConfig.CABundle, bundle) {
			mwc.Webhooks[i].ClientConfig.CABundle = bundle
			changed = true
		}
	}
	if changed {
		if err := r.Client.Update(ctx, mwc); err != nil {
			r.patched.Store(false)
			return fmt.Errorf("updating the caBundle of MutatingWebhookConfiguration %s: %w", name, err)
		}
	}
	r.patched.Store(true)
	return nil
}

func parseCertState(s *corev1.Secret) *certState {
	st := &certState{}
	st.ca = parseKeyPair(s.Data[keyCA], s.Data[keyCAKey])
	if st.ca == nil {
		return &certState{} // unreadable: start over
	}
	st.next = parseKeyPair(s.Data[keyNextCA], s.Data[keyNextCAKey])
	if p := parseKeyPair(s.Data[keyPrevCA], nil); p != nil {
		st.prev = p.cert
	}
	st.serving = parseKeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	st.stagedAt, _ = time.Parse(time.RFC3339, s.Annotations[annotationStaged])
	st.promo, _ = time.Parse(time.RFC3339, s.Annotations[annotationPromo])
	return st
}

func writeCertState(s *corev1.Secret, st *certState) {
	s.Data = map[string][]byte{
		keyCA:                   st.ca.certPEM,
		keyCAKey:                keyPEM(st.ca.key),
		corev1.TLSCertKey:       st.serving.certPEM,
		corev1.TLSPrivateKeyKey: keyPEM(st.serving.key),
	}
	bundle := slices.Clone(st.ca.certPEM)
	if st.next != nil {
		s.Data[keyNextCA], s.Data[keyNextCAKey] = st.next.certPEM, keyPEM(st.next.key)
		bundle = append(bundle, st.next.certPEM...)
	}
	if st.prev != nil {
		p := certPEM(st.prev.Raw)
		s.Data[keyPrevCA] = p
		bundle = append(bundle, p...)
	}
	s.Data[keyCABundle] = bundle
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	delete(s.Annotations, annotationStaged)
	delete(s.Annotations, annotationPromo)
	if st.next != nil {
		s.Annotations[annotationStaged] = st.stagedAt.UTC().Format(time.RFC3339Nano)
	}
	if st.prev != nil {
		s.Annotations[annotationPromo] = st.promo.UTC().Format(time.RFC3339Nano)
	}
}

// parseKeyPair reads a PEM certificate and, when keyPEM is not nil, its
// ECDSA key; nil when either is missing or unreadable.
func parseKeyPair(cPEM, kPEM []byte) *keyPair {
	b, _ := pem.Decode(cPEM)
	if b == nil || b.Type != "CERTIFICATE" {
		return nil
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil
	}
	kp := &keyPair{cert: cert, certPEM: certPEM(cert.Raw)}
	if kPEM == nil {
		return kp
	}
	kb, _ := pem.Decode(kPEM)
	if kb == nil {
		return nil
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil || !key.PublicKey.Equal(cert.PublicKey) {
		return nil
	}
	kp.key = key
	return kp
}

func newCA(now time.Time, validity time.Duration) (*keyPair, error) {
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "kubepact-webhook-ca@" + now.UTC().Format(time.RFC3339Nano)},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	return sign(tmpl, nil)
}

func newServingCert(now time.Time, o CertOptions, ca *keyPair) (*keyPair, error) {
	notAfter := now.Add(o.CertValidity)
	if notAfter.After(ca.cert.NotAfter) {
		notAfter = ca.cert.NotAfter
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cmp.Or(firstOf(o.DNSNames), "kubepact-webhook")},
		DNSNames:    o.DNSNames,
		IPAddresses: o.IPAddresses,
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	return sign(tmpl, ca)
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// sign creates a key and a certificate from tmpl, signed by parent (self
// signed when nil).
func sign(tmpl *x509.Certificate, parent *keyPair) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		return nil, fmt.Errorf("creating a certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &keyPair{cert: cert, key: key, certPEM: certPEM(der)}, nil
}

func sameNames(c *x509.Certificate, o CertOptions) bool {
	if !slices.Equal(c.DNSNames, o.DNSNames) || len(c.IPAddresses) != len(o.IPAddresses) {
		return false
	}
	for i := range c.IPAddresses {
		if !c.IPAddresses[i].Equal(o.IPAddresses[i]) {
			return false
		}
	}
	return true
}

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func keyPEM(k *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err) // a P-256 key always marshals
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}
