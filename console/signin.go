package console

import (
	"errors"
	"net/http"
	"strings"
)

func (c *Console) signinPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, "signin", "Sign in", "", map[string]string{"Error": r.URL.Query().Get("error")})
}

// signin checks the posted token with the API and keeps it in an
// HttpOnly, SameSite=Strict cookie. A wrong token is said to be wrong,
// never echoed.
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" && !c.open {
		http.Redirect(w, r, c.prefix+"/signin?error=a+token+is+required", http.StatusSeeOther)
		return
	}
	if _, err := c.whoami(r.Context(), token); err != nil {
		if errors.Is(err, errSignedOut) {
			http.Redirect(w, r, c.prefix+"/signin?error=the+token+is+not+valid", http.StatusSeeOther)
			return
		}
		c.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: token, Path: c.prefix + "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, c.prefix+"/queue", http.StatusSeeOther)
}

func (c *Console) signout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: "", Path: c.prefix + "/", MaxAge: -1, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, c.prefix+"/signin", http.StatusSeeOther)
}
