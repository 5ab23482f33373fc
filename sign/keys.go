package sign

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/kms"
)

// ErrKeyExists reports that keygen would overwrite an existing key file.
var ErrKeyExists = errors.New("key file already exists")

// ErrNoPassword reports an encrypted key without a password source.
var ErrNoPassword = errors.New("no key password")

// IsKMSRef reports whether ref names a KMS key (scheme://...) rather than a
// file. Every scheme goes through sigstore's kms.Get: the providers linked
// into the binary (none by default) and, for any other scheme, the sigstore
// KMS plugin protocol (an executable sigstore-kms-<scheme> on PATH).
func IsKMSRef(ref string) bool {
	scheme, rest, ok := strings.Cut(ref, "://")
	return ok && scheme != "" && rest != "" && !strings.ContainsAny(scheme, `/\.`)
}

// GenerateKeyPair creates an ECDSA P-256 key pair in cosign's format: the
// private key encrypted with password (scrypt + secretbox, the same
// "ENCRYPTED SIGSTORE PRIVATE KEY" PEM the cosign CLI writes) and the public
// key as PKIX PEM. Neither file may exist: keygen never overwrites a key. The
// private key is written with mode 0600, both atomically (temp file + link),
// so a failure leaves no partial key behind.
func GenerateKeyPair(privPath, pubPath string, password []byte) error {
	if len(password) == 0 {
		return fmt.Errorf("generating key pair: %w: an empty password leaves the private key readable by anyone who copies the file", ErrNoPassword)
	}
	for _, p := range []string{privPath, pubPath} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("generating key pair: %s: %w", p, ErrKeyExists)
		}
	}
	keys, err := cosign.GenerateKeyPair(func(bool) ([]byte, error) { return password, nil })
	if err != nil {
		return fmt.Errorf("generating key pair: %w", err)
	}
	if err := writeNew(privPath, keys.PrivateBytes, 0o600); err != nil {
		return err
	}
	if err := writeNew(pubPath, keys.PublicBytes, 0o644); err != nil {
		_ = os.Remove(privPath)
		return err
	}
	return nil
}

// writeNew writes data to path with mode perm, failing when path exists.
// The bytes go to a temp file in the same directory first; link(2) then
// publishes it atomically and refuses to replace an existing file.
func writeNew(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fullsend-key-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("writing %s: %w", path, ErrKeyExists)
		}
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// LoadPrivateKey loads a signing key: a cosign private key file (encrypted,
// decrypted with password) or a KMS reference (see IsKMSRef).
func LoadPrivateKey(ctx context.Context, ref string, password []byte) (signature.SignerVerifier, error) {
	if IsKMSRef(ref) {
		sv, err := kms.Get(ctx, ref, crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("loading KMS key %s: %w", ref, err)
		}
		return sv, nil
	}
	data, err := os.ReadFile(ref)
	if err != nil {
		return nil, fmt.Errorf("loading private key: %w", err)
	}
	sv, err := cosign.LoadPrivateKey(data, password, nil)
	if err != nil {
		if len(password) == 0 {
			return nil, fmt.Errorf("loading private key %s: %w: set COSIGN_PASSWORD (%w)", ref, ErrNoPassword, err)
		}
		return nil, fmt.Errorf("loading private key %s: %w (wrong password, or not a cosign private key)", ref, err)
	}
	return sv, nil
}

// LoadPublicKey loads a verification key: a PEM public key file (PKIX; the
// .pub file of cosign or fullsend keygen; ECDSA, RSA or Ed25519) or a KMS
// reference (see IsKMSRef).
func LoadPublicKey(ctx context.Context, ref string) (signature.Verifier, error) {
	if IsKMSRef(ref) {
		sv, err := kms.Get(ctx, ref, crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("loading KMS key %s: %w", ref, err)
		}
		return sv, nil
	}
	data, err := os.ReadFile(ref)
	if err != nil {
		return nil, fmt.Errorf("loading public key: %w", err)
	}
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("loading public key %s: %w (want a PEM \"PUBLIC KEY\" block, such as cosign.pub)", ref, err)
	}
	v, err := signature.LoadDefaultVerifier(pub)
	if err != nil {
		return nil, fmt.Errorf("loading public key %s: %w", ref, err)
	}
	return v, nil
}

// KeyID returns a short, stable identifier of a public key: "sha256:" and
// the hex SHA-256 of its PKIX DER encoding, for logs and results.
func KeyID(v signature.Verifier) (string, error) {
	pub, err := v.PublicKey()
	if err != nil {
		return "", err
	}
	der, err := cryptoutils.MarshalPublicKeyToDER(pub)
	if err != nil {
		return "", err
	}
	return "sha256:" + sha256Hex(der), nil
}
