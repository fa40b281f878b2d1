"""The introduction above the operations in the API's documentation (SPECTACULAR_SETTINGS["DESCRIPTION"])."""

API_DESCRIPTION = """
The REST API of the baccarat back-office: game instances, rounds, bets, accounts and their ledger,
the audit trail and settlement. JSON in and out, under `/api/v1/`.

## Roles
Every caller is a user in one role; the role decides which operations answer (403 otherwise):

- **integration** — a game server: reads games, rounds, bets and accounts; opens accounts and rounds,
  places bets, deals.
- **operator** — configures games, rotates seed pairs, voids rounds, adjusts balances, requests a
  settlement sweep; reads everything.
- **support** — reads everything and recomputes rounds; changes nothing.
- **admin** — everything.
- **regulator** — reads everything support reads (rounds, recall, audit events, the signed head and
  proofs); changes nothing, with its session or its token (every write is 403 naming the permission).

## Tokens
An administrator creates the user and its token:
`python manage.py create_staff_user table-server --role integration` prints the token on its last
line, once (`python manage.py api_token create|list|rotate|revoke` manage them; administrators also
at `/api/v1/api-tokens/`). A token has scopes (`read`; `bets`: open rounds, bet, bulk, deal;
`write`: everything the role may do), may expire and may be limited to addresses. Send it on every call:

    Authorization: Token bo_9944b09199c62bcf9418ad846dd0e4bbdfc6

Signed-in staff may also call the API with their admin session.

## Idempotency keys
A bet carries an `idempotency_key`, unique per client: sending the same bet again with the same key
returns the original bet (200) and debits nothing, so a game server can retry after a timeout; the
same key with other content is refused (409). Money is a decimal string (`"10.50"`), never a float.

## Errors
Every error is JSON that names what is wrong, and nothing is written:

    400 {"stake": ["Exceeds the account's balance."]}
    409 {"round": ["The round is DEALT; it takes no bets."]}
    403 {"detail": "You do not have permission to perform this action."}

400 is bad input (the field's name is the key), 404 an unknown object, 409 a request at odds with the
state of things (a dealt round, a reused key). Every response carries an `X-Request-ID` (yours when
you send a well-formed one), recorded with every audit event the request writes.

## Provably fair (PF-1), in brief
Before a seed pair takes its first bet its `server_seed_hash` (SHA-256 of a secret server seed) is
published; each round is dealt from `HMAC-SHA256(server seed, "client_seed:nonce:r")`. Rotating the
pair reveals the seed, and `GET /api/v1/rounds/{id}/verify/` (or anyone, with the public page or the
one-file verifier) recomputes the round from it. An unrevealed server seed is never in any response.
"""
