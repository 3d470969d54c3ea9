// Package demoservice is a small, real HTTP implementation of the catalog
// example's OpenAPI interface (examples/bundles/catalog/interfaces/openapi.yaml),
// kept in memory. `make demo`, the capability tests and the sidecar
// benchmarks call it through generated tools.
//
// It must not import anything of kubepact: it stands in for the service a
// contract describes, which knows nothing of kubepact.
package demoservice

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Options configures the demo service. The zero value serves without
// authentication and with the seed products.
type Options struct {
	// Token, when set, is the bearer token every call but /healthz needs.
	// deleteProduct also accepts it as X-Catalog-Key.
	Token string
	// Empty starts with no products.
	Empty bool
}

// Money is an amount in minor units of a currency.
type Money struct {
	Currency    string `json:"currency"`
	AmountMinor int64  `json:"amountMinor"`
}

// Product is one catalog entry.
type Product struct {
	ID    string   `json:"id"`
	SKU   string   `json:"sku"`
	Name  string   `json:"name"`
	Tags  []string `json:"tags,omitempty"`
	Price Money    `json:"price"`
	Stock int64    `json:"stock"`
}

type newProduct struct {
	SKU   string   `json:"sku"`
	Name  string   `json:"name"`
	Tags  []string `json:"tags,omitempty"`
	Price *Money   `json:"price"`
}

type service struct {
	opts     Options
	mu       sync.Mutex
	products []*Product // newest first
	nextID   int
}

var productID = regexp.MustCompile(`^p-[0-9a-z]{4,32}$`)

// New returns the demo service's handler.
func New(opts *Options) http.Handler {
	s := &service{nextID: 1}
	if opts != nil {
		s.opts = *opts
	}
	if !s.opts.Empty {
		for _, p := range []newProduct{
			{SKU: "MUG-1", Name: "Enamel mug", Tags: []string{"kitchen", "camping"}, Price: &Money{"EUR", 1290}},
			{SKU: "TNT-2", Name: "Two-person tent", Tags: []string{"camping"}, Price: &Money{"EUR", 18900}},
			{SKU: "LMP-3", Name: "Head lamp", Tags: []string{"camping", "light"}, Price: &Money{"EUR", 3450}},
		} {
			s.add(p, 10)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /products", s.auth(s.list, false))
	mux.HandleFunc("POST /products", s.auth(s.create, false))
	mux.HandleFunc("GET /products/{productId}", s.auth(s.get, false))
	mux.HandleFunc("PUT /products/{productId}", s.auth(s.replace, false))
	mux.HandleFunc("DELETE /products/{productId}", s.auth(s.delete, true))
	mux.HandleFunc("PATCH /products/{productId}/stock", s.auth(s.adjustStock, false))
	return mux
}

func (s *service) add(p newProduct, stock int64) *Product {
	prod := &Product{ID: fmt.Sprintf("p-%04d", s.nextID), SKU: p.SKU, Name: p.Name, Tags: p.Tags, Price: *p.Price, Stock: stock}
	s.nextID++
	s.products = append([]*Product{prod}, s.products...)
	return prod
}

// auth checks the bearer token (or, where allowed, the API key).
func (s *service) auth(next http.HandlerFunc, apiKey bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Token != "" {
			ok := equal(r.Header.Get("Authorization"), "Bearer "+s.opts.Token)
			if apiKey && equal(r.Header.Get("X-Catalog-Key"), s.opts.Token) {
				ok = true
			}
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="catalog"`)
				writeError(w, http.StatusUnauthorized, "a valid bearer token is required")
				return
			}
		}
		next(w, r)
	}
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func (s *service) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, http.StatusBadRequest, "limit must be an integer from 1 to 100")
			return
		}
		limit = n
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "cursor is not one this service issued")
			return
		}
		start = n
	}
	tags := q["tag"]
	s.mu.Lock()
	var matched []Product
	for _, p := range s.products {
		if hasAll(p.Tags, tags) {
			matched = append(matched, *p)
		}
	}
	s.mu.Unlock()
	page := struct {
		Items      []Product `json:"items"`
		NextCursor *string   `json:"nextCursor"`
	}{Items: []Product{}}
	if start < len(matched) {
		end := min(start+limit, len(matched))
		page.Items = matched[start:end]
		if end < len(matched) {
			next := strconv.Itoa(end)
			page.NextCursor = &next
		}
	}
	writeJSON(w, http.StatusOK, page)
}

func hasAll(have, want []string) bool {
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

func (s *service) create(w http.ResponseWriter, r *http.Request) {
	p, ok := decodeProduct(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.products {
		if e.SKU == p.SKU {
			writeError(w, http.StatusConflict, "a product with this SKU exists")
			return
		}
	}
	writeJSON(w, http.StatusCreated, s.add(p, 0))
}

func (s *service) find(w http.ResponseWriter, r *http.Request) (int, bool) {
	id := r.PathValue("productId")
	if !productID.MatchString(id) {
		writeError(w, http.StatusBadRequest, "productId must match ^p-[0-9a-z]{4,32}$")
		return 0, false
	}
	for i, p := range s.products {
		if p.ID == id {
			return i, true
		}
	}
	writeError(w, http.StatusNotFound, "no such product")
	return 0, false
}

func (s *service) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.find(w, r); ok {
		writeJSON(w, http.StatusOK, s.products[i])
	}
}

func (s *service) replace(w http.ResponseWriter, r *http.Request) {
	p, ok := decodeProduct(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.find(w, r); ok {
		cur := s.products[i]
		cur.SKU, cur.Name, cur.Tags, cur.Price = p.SKU, p.Name, p.Tags, *p.Price
		writeJSON(w, http.StatusOK, cur)
	}
}

func (s *service) delete(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.find(w, r); ok {
		s.products = slices.Delete(s.products, i, i+1)
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *service) adjustStock(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Delta  *int64 `json:"delta"`
		Reason string `json:"reason"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&in); err != nil || in.Delta == nil {
		writeError(w, http.StatusBadRequest, "body must be {\"delta\": integer, \"reason\": string}")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.find(w, r); ok {
		p := s.products[i]
		if p.Stock+*in.Delta < 0 {
			writeError(w, http.StatusConflict, "stock cannot go below zero")
			return
		}
		p.Stock += *in.Delta
		writeJSON(w, http.StatusOK, map[string]int64{"stock": p.Stock})
	}
}

func decodeProduct(w http.ResponseWriter, r *http.Request) (newProduct, bool) {
	var p newProduct
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		writeError(w, http.StatusBadRequest, "body is not a product: "+err.Error())
		return p, false
	}
	if strings.TrimSpace(p.SKU) == "" || strings.TrimSpace(p.Name) == "" || p.Price == nil {
		writeError(w, http.StatusBadRequest, "sku, name and price are required")
		return p, false
	}
	return p, true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
