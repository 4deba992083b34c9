package provider

import (
	"errors"
	"net/http"
)

// Sentinels of the provider's refusals; HTTPStatus maps them to the REAR
// answer.
var (
	// ErrBadRequest: a request that cannot be served as it is (bad JSON, a
	// configuration of the wrong type, a partition below the minimum...).
	ErrBadRequest = errors.New("bad request")
	// ErrFlavorNotFound: no flavor has the identifier asked for.
	ErrFlavorNotFound = errors.New("flavor not found")
	// ErrTransactionNotFound: no transaction has the identifier asked for.
	ErrTransactionNotFound = errors.New("transaction not found")
	// ErrNotBuyer: the caller is not the buyer the request or the
	// transaction names.
	ErrNotBuyer = errors.New("caller is not the buyer")
	// ErrSoldOut: the flavor, or as much of it as asked, is not available.
	ErrSoldOut = errors.New("not available")
	// ErrExpired: the transaction expired before it was bought.
	ErrExpired = errors.New("transaction expired")
	// ErrClosed: the transaction was released and cannot be bought.
	ErrClosed = errors.New("transaction released")
	// ErrNotSold: this node does not sell flavors of that type.
	ErrNotSold = errors.New("flavor type not sold by this node")
	// ErrBusy: too many concurrent writes to the same flavor; retry.
	ErrBusy = errors.New("too many concurrent reservations, retry")
	// ErrNotProvisionable: this node cannot provision what the buyer asks
	// (a hosting policy it does not serve, a configuration its blueprint
	// cannot render, a type its platform cannot run); the message says why.
	ErrNotProvisionable = errors.New("not provisionable")
	// ErrContractNotFound: no contract (or allocation) has the identifier
	// asked for.
	ErrContractNotFound = errors.New("contract not found")
)

// HTTPStatus is the REAR status of an error of this package: 400 for
// ErrBadRequest, ErrNotSold and ErrNotProvisionable, 403 ErrNotBuyer, 404 the not-found errors,
// 408 ErrExpired (as the reference node answers), 409 ErrSoldOut, ErrBusy
// and ErrClosed, 500 anything else.
func HTTPStatus(err error) int {
	switch {
	case errors.Is(err, ErrBadRequest), errors.Is(err, ErrNotSold), errors.Is(err, ErrNotProvisionable):
		return http.StatusBadRequest
	case errors.Is(err, ErrNotBuyer):
		return http.StatusForbidden
	case errors.Is(err, ErrFlavorNotFound), errors.Is(err, ErrTransactionNotFound), errors.Is(err, ErrContractNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrExpired):
		return http.StatusRequestTimeout
	case errors.Is(err, ErrSoldOut), errors.Is(err, ErrBusy), errors.Is(err, ErrClosed):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}
