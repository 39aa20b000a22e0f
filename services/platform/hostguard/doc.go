// Package hostguard keeps web pages in a user's browser away from zen's
// HTTP endpoints (MCP and the gateway). A page can make the browser send
// requests anywhere; two checks stop it from doing harm:
//
//   - DNS rebinding: a page on attacker.example re-points its name at zen's
//     address and then reads zen's answers as same-origin. The browser
//     still sends Host: attacker.example, so only Host values zen knows are
//     accepted: loopback names, and those listed in ZEN_ALLOWED_HOSTS.
//   - Cross-site writes: a page posts to zen without reading the answer.
//     Browsers mark such requests (Sec-Fetch-Site, Origin), and
//     net/http's CrossOriginProtection refuses them.
//
// The MCP SDK has its own Host check, but only for connections that arrive
// on a loopback address; in a container zen listens on 0.0.0.0 and
// connections arrive on another interface, so zen checks every request
// itself, on every listener.
package hostguard
