/* bodies.c - the generator's data: services, severities and the weighted
 * log-line templates (see bodies.h).
 *
 * The weights are rows per 1M and are chosen so that the Body token
 * statistics of DATASET.md hold (tests/gen/test_gen_stats.c checks them).
 * The plan, in thousands of rows per 1M (F failed, E error, C charge,
 * K cache, O order):
 *   E&F&K 50 (cart cache errors; 0.3 also charge+card+payment)
 *   E&F&!K 43 (31 "failed to place order ... charge card", 12 checkout)
 *   E only 8, F only 36 (18 of them with "order"), K only 7,
 *   C without E/F/K 36.7 (payment/checkout "charge" lines).
 * So "at least 2 of {E,F,C,K}" is exactly E&F (93), and every "place" sits in
 * "failed to place order". Only "connection" contains "conn"/"nnec"; the only
 * charg* word is "charge"; "cache" is the only c?che word; "tion" words:
 * connection, confirmation, transaction, action, validation, destination,
 * expiration, recommendation, correlation, partition, exception.
 * Keep those invariants when adding templates.
 */
#include "gen/bodies.h"

const gen_sev_def gen_sevs[GEN_SEV_COUNT] = {
    [GEN_TRACE] = {"TRACE", 1}, [GEN_DEBUG] = {"DEBUG", 5},  [GEN_INFO] = {"INFO", 9},
    [GEN_WARN] = {"WARN", 13},  [GEN_ERROR] = {"ERROR", 17},
};

enum {
    S_FRONTEND,
    S_CART,
    S_CHECKOUT,
    S_PAYMENT,
    S_EMAIL,
    S_CURRENCY,
    S_SHIPPING,
    S_AD,
    S_RECOMMENDATION,
    S_PRODUCT_CATALOG,
    S_QUOTE,
    S_FRAUD_DETECTION,
    S_ACCOUNTING,
    S_KAFKA,
    S_FRONTEND_PROXY,
    S_IMAGE_PROVIDER,
    S_LOAD_GENERATOR,
    S_COUNT
};

/* Resource attributes: {svc} {pod} {node} {cid} {poduid} {ppid} are filled
 * once per (service, pod) at start-up. */
#define RA_K8S "{\"service.name\":\"{svc}\",\"k8s.pod.name\":\"{pod}\",\"container.id\":\"{cid}\""
#define RA_K8S_FULL RA_K8S ",\"k8s.pod.uid\":\"{poduid}\",\"k8s.node.name\":\"{node}\""
#define SDK(lang, ver) ",\"telemetry.sdk.language\":\"" lang "\""

#define URL_RES "https://opentelemetry.io/schemas/1.26.0"
#define URL_SCOPE "https://opentelemetry.io/schemas/1.24.0"

const gen_svc_def gen_services[S_COUNT] = {
    [S_FRONTEND] = {"frontend", URL_RES, "", "", "", "{}",
                    RA_K8S SDK("nodejs", "2.0.1") ",\"process.runtime.name\":\"nodejs\","
                                                  "\"process.pid\":\"{ppid}\"}",
                    "{\"session.id\":\"{uuid}\",\"app.user.currency\":\"{cur}\"}", 3, 97},
    [S_CART] = {"cart", "", "", "cart.cartstore.ValkeyCartStore", "", "{}",
                RA_K8S SDK("dotnet", "1.12.0") "}", "{\"userId\":\"{uid}\"}", 2, 97},
    [S_CHECKOUT] = {"checkout", URL_RES, "", "", "", "{}",
                    RA_K8S_FULL SDK("go", "1.37.0") ",\"process.runtime.version\":\"go1.24.5\"}",
                    "{\"app.user.id\":\"{uid}\",\"app.order.id\":\"{oid}\",\"app.user.currency\":"
                    "\"{cur}\"}",
                    2, 98},
    [S_PAYMENT] = {"payment", URL_RES, "", "", "", "{}",
                   RA_K8S SDK("nodejs", "2.0.1") ",\"process.pid\":\"{ppid}\"}",
                   "{\"app.payment.amount\":\"{amt}\",\"app.payment.currency\":\"{cur}\","
                   "\"app.payment.card_type\":\"visa\"}",
                   2, 98},
    [S_EMAIL] = {"email", "", "", "", "", "{}", RA_K8S SDK("ruby", "1.5.0") "}",
                 "{\"app.email.recipient\":\"{email}\"}", 1, 95},
    [S_CURRENCY] = {"currency", URL_RES, URL_SCOPE, "", "", "{}",
                    RA_K8S SDK("cpp", "1.21.0") ",\"process.pid\":\"{ppid}\"}",
                    "{\"app.currency.conversion.from\":\"{cur}\",\"app.currency.conversion.to\":"
                    "\"{cur2}\"}",
                    2, 97},
    [S_SHIPPING] = {"shipping", URL_RES, "", "", "", "{}", RA_K8S SDK("rust", "0.30.0") "}",
                    "{\"app.shipping.zip_code\":\"{zip}\",\"app.shipping.items.count\":\"{qty}\"}",
                    2, 97},
    [S_AD] = {"ad", URL_RES, "", "", "2.20.0", "{\"logger.name\":\"oteldemo.AdService\"}",
              RA_K8S SDK("java", "1.52.0") ",\"process.runtime.name\":\"OpenJDK Runtime "
                                           "Environment\",\"process.pid\":\"{ppid}\"}",
              "{\"app.ads.contextKeys\":\"{cat}\",\"app.ads.count\":\"{qty}\"}", 2, 96},
    [S_RECOMMENDATION] = {"recommendation", URL_RES, "", "", "0.57b0", "{}",
                          RA_K8S SDK("python", "1.36.0") ",\"process.runtime.name\":\"cpython\"}",
                          "{\"app.products.count\":\"{qty}\",\"app.product.id\":\"{pid}\"}", 2, 97},
    [S_PRODUCT_CATALOG] = {"product-catalog", URL_RES, "", "", "", "{}",
                           RA_K8S SDK("go", "1.37.0") "}",
                           "{\"app.product.id\":\"{pid}\",\"app.products.count\":\"{qty}\"}", 2,
                           97},
    [S_QUOTE] = {"quote", "", "", "", "", "{}", RA_K8S SDK("php", "1.1.3") "}",
                 "{\"app.quote.items.count\":\"{qty}\",\"app.quote.cost.total\":\"{amt}\"}", 1, 96},
    [S_FRAUD_DETECTION] = {"fraud-detection", URL_RES, "", "", "2.20.0",
                           "{\"logger.name\":\"frauddetection\"}",
                           RA_K8S SDK("java", "1.52.0") ",\"process.pid\":\"{ppid}\"}",
                           "{\"app.order.id\":\"{oid}\",\"messaging.kafka.offset\":\"{n}\"}", 1,
                           90},
    [S_ACCOUNTING] = {"accounting", "", "", "", "", "{}", RA_K8S SDK("dotnet", "1.12.0") "}",
                      "{\"app.order.id\":\"{oid}\",\"messaging.destination.name\":\"orders\"}", 1,
                      90},
    [S_KAFKA] = {"kafka", "", "", "", "", "{\"logger.name\":\"kafka.server\"}",
                 RA_K8S SDK("java", "1.52.0") ",\"process.runtime.name\":\"OpenJDK Runtime "
                                              "Environment\"}",
                 "{\"thread.name\":\"data-plane-kafka-request-handler-{d}\"}", 1, 0},
    [S_FRONTEND_PROXY] = {"frontend-proxy", "", "", "", "", "{}",
                          RA_K8S ",\"telemetry.sdk.language\":\"cpp\"}",
                          "{\"http.request.method\":\"GET\",\"url.path\":\"{groute}\","
                          "\"http.response.status_code\":\"{status}\",\"upstream.cluster\":"
                          "\"frontend\"}",
                          2, 98},
    [S_IMAGE_PROVIDER] = {"image-provider", "", "", "", "", "{}", RA_K8S "}",
                          "{\"http.request.method\":\"GET\",\"url.path\":\"/images/products/"
                          "{img}.jpg\",\"http.response.status_code\":\"{status}\"}",
                          1, 50},
    [S_LOAD_GENERATOR] = {"load-generator", "", "", "", "0.57b0", "{}",
                          RA_K8S SDK("python", "1.36.0") ",\"process.runtime.name\":\"cpython\"}",
                          "{\"locust.user\":\"WebsiteUser\",\"url.path\":\"{groute}\"}", 1, 95},
};
const size_t gen_nservices = S_COUNT;

#define CART_ATTRS_ITEM "{\"userId\":\"{uid}\",\"productId\":\"{pid}\",\"quantity\":\"{qty}\"}"
#define CART_ATTRS_CACHE(hit) "{\"userId\":\"{uid}\",\"cache.hit\":\"" hit "\"}"
#define CART_ATTRS_EXC(t) "{\"userId\":\"{uid}\",\"exception.type\":\"" t "\"}"
#define PROXY_ATTRS(m, path)                                                                       \
    "{\"http.request.method\":\"" m "\",\"url.path\":\"" path "\",\"http.response.status_code\":"  \
    "\"{status}\",\"upstream.cluster\":\"frontend\"}"

const gen_tmpl_def gen_templates[] = {
    /* ---- frontend: 120k ---- */
    {S_FRONTEND, GEN_ERROR, 31000,
     "failed to place order: rpc error: code = Internal desc = failed to charge card: could not "
     "charge the card: card ending {card4} declined",
     "{\"app.user.id\":\"{uid}\",\"app.order.amount\":\"{amt}\",\"app.user.currency\":\"{cur}\","
     "\"rpc.grpc.status_code\":\"13\"}"},
    {S_FRONTEND, GEN_INFO, 30000, "GET /api/products/{pid} 200 in {ms}ms",
     "{\"http.request.method\":\"GET\",\"http.route\":\"/api/products/[productId]\","
     "\"app.product.id\":\"{pid}\"}"},
    {S_FRONTEND, GEN_INFO, 20000, "server action addToCart completed in {ms}ms for user {uid}",
     NULL},
    {S_FRONTEND, GEN_INFO, 12000, "calling checkout service PlaceOrder for user {uid} ({cur})",
     NULL},
    {S_FRONTEND, GEN_DEBUG, 6000,
     "rendered product page {pid} for locale de-DE: Größe {qty}, café {amt} €", NULL},
    {S_FRONTEND, GEN_DEBUG, 4000,
     "rendered product page {pid} for locale ja-JP: 東京 warehouse stock {n}", NULL},
    {S_FRONTEND, GEN_INFO, 6000, "order {oid} failed validation: empty cart for user {uid}",
     "{\"app.user.id\":\"{uid}\",\"app.order.id\":\"{oid}\"}"},
    {S_FRONTEND, GEN_INFO, 11000, "GET /api/cart?sessionId={uuid}&currencyCode={cur} 200 in {ms}ms",
     NULL},

    /* ---- cart: 417k ---- */
    {S_CART, GEN_INFO, 150000, "GetCartAsync called with userId={uid}", NULL},
    {S_CART, GEN_INFO, 112000,
     "AddItemAsync called with userId={uid}, productId={pid}, quantity={qty}", CART_ATTRS_ITEM},
    {S_CART, GEN_INFO, 38000, "EmptyCartAsync called with userId={uid}", NULL},
    {S_CART, GEN_INFO, 4000, "CACHE miss for cart {uid}, loading from valkey-cart:6379",
     CART_ATTRS_CACHE("false")},
    {S_CART, GEN_INFO, 3000, "cache hit for cart {uid}: {qty} items in {ms}ms",
     CART_ATTRS_CACHE("true")},
    {S_CART, GEN_ERROR, 20000,
     "failed to get cart {uid}: cache error: connection to valkey-cart:6379 timed out after "
     "{ms}ms\n   at StackExchange.Redis.RedisTimeoutException",
     CART_ATTRS_EXC("StackExchange.Redis.RedisTimeoutException")},
    {S_CART, GEN_INFO, 27100,
     "retrying GetCartAsync after cache error: failed to deserialize cart {uid} ({n} bytes)", NULL},
    {S_CART, GEN_ERROR, 2600,
     "failed to update cache for cart {uid}: error: Connection refused (valkey-cart:6379)",
     CART_ATTRS_EXC("StackExchange.Redis.RedisConnectionException")},
    {S_CART, GEN_INFO, 35000, "Successfully fetched cart of {qty} items for user {uid} in {ms}ms",
     NULL},
    {S_CART, GEN_INFO, 9500, "Cart {uid} updated: product {pid} x{qty}, expiration {n}s",
     CART_ATTRS_ITEM},
    {S_CART, GEN_INFO, 15800, "Cart {uid} updated: product {pid} x{qty}", CART_ATTRS_ITEM},

    /* ---- checkout: 60k ---- */
    {S_CHECKOUT, GEN_INFO, 20000, "[PlaceOrder] user_id=\"{uid}\" user_currency=\"{cur}\"", NULL},
    {S_CHECKOUT, GEN_INFO, 1400, "payment went through (transaction_id: {uuid})", NULL},
    {S_CHECKOUT, GEN_INFO, 200, "order confirmation email sent to \"{email}\"", NULL},
    {S_CHECKOUT, GEN_ERROR, 1150,
     "failed to send order confirmation to \"{email}\": POST to email service: expected 200, got "
     "500",
     NULL},
    {S_CHECKOUT, GEN_ERROR, 3850,
     "failed to send order confirmation to \"{email}\": rpc error: code = DeadlineExceeded desc = "
     "context deadline exceeded",
     NULL},
    {S_CHECKOUT, GEN_ERROR, 8150,
     "failed to prepare order: rpc error: code = Unavailable desc = connection error: dial tcp "
     "{ip}:8080: i/o timeout",
     NULL},
    {S_CHECKOUT, GEN_INFO, 8700,
     "charge card ending {card4}: {amt} {cur} approved (transaction_id: {uuid})", NULL},
    {S_CHECKOUT, GEN_INFO, 16550,
     "[PlaceOrder] cart of {qty} items converted to {cur}, total {amt}", NULL},

    /* ---- payment: 45k ---- */
    {S_PAYMENT, GEN_INFO, 12000, "Charge request received. amount={amt} {cur}", NULL},
    {S_PAYMENT, GEN_INFO, 16000, "Transaction complete. charge {uuid}: {amt} {cur}", NULL},
    {S_PAYMENT, GEN_ERROR, 300,
     "failed to charge card {card4}: payment token cache error, stale entry {h8}", NULL},
    {S_PAYMENT, GEN_INFO, 16700, "card validated: visa ending in {card4}, expires {mm}/{yy}", NULL},

    /* ---- email: 13k ---- */
    {S_EMAIL, GEN_INFO, 5250, "email queued for delivery to {email} (message id {h16})", NULL},
    {S_EMAIL, GEN_INFO, 7750, "SMTP delivery ok for {email} in {ms}ms", NULL},

    /* ---- currency: 45k ---- */
    {S_CURRENCY, GEN_INFO, 15000, "Conversion {amt} {cur} -> {cur2}: {amt2}", NULL},
    {S_CURRENCY, GEN_INFO, 30000, "GetSupportedCurrencies: {n} currencies in {ms}ms",
     "{\"app.currency.count\":\"33\"}"},

    /* ---- shipping: 25k ---- */
    {S_SHIPPING, GEN_INFO, 10000, "shipping quote for {qty} items to {city}: {amt} USD", NULL},
    {S_SHIPPING, GEN_INFO, 8000, "tracking id {uuid} created for destination {city}", NULL},
    {S_SHIPPING, GEN_ERROR, 4000, "failed to ship order {oid}: no carrier available for {city}",
     "{\"app.order.id\":\"{oid}\",\"app.shipping.zip_code\":\"{zip}\"}"},
    {S_SHIPPING, GEN_INFO, 3000, "GetQuote: zip {zip}, {qty} items", NULL},

    /* ---- ad: 30k ---- */
    {S_AD, GEN_INFO, 4000, "Targeted ad request received for [{cat}]", NULL},
    {S_AD, GEN_INFO, 23000, "serving {qty} random ads, no context keys", NULL},
    {S_AD, GEN_ERROR, 3000, "error loading ads for category {cat}: adFailure flag enabled", NULL},

    /* ---- recommendation: 30k ---- */
    {S_RECOMMENDATION, GEN_INFO, 3000, "recommendation request received for {qty} products", NULL},
    {S_RECOMMENDATION, GEN_INFO, 22000,
     "Receive ListRecommendations for product ids:['{pid}', '{pidr}', '{pidr}']", NULL},
    {S_RECOMMENDATION, GEN_INFO, 5000,
     "failed to fetch product {pid} from catalog, using cached list", NULL},

    /* ---- product-catalog: 30k ---- */
    {S_PRODUCT_CATALOG, GEN_INFO, 20000, "Product Found: {pid} ({ms}ms)", NULL},
    {S_PRODUCT_CATALOG, GEN_INFO, 7000, "Loaded {n} products from products.json", NULL},
    {S_PRODUCT_CATALOG, GEN_DEBUG, 3000, "ListProducts: returned {qty} products", NULL},

    /* ---- quote: 20k ---- */
    {S_QUOTE, GEN_INFO, 8000, "Calculated quote:\t{amt} USD for {qty} items", NULL},
    {S_QUOTE, GEN_INFO, 6000, "quote service received \"{qty}\" items", NULL},
    {S_QUOTE, GEN_INFO, 6000, "failed to parse quote for {qty} items, falling back to default rate",
     NULL},

    /* ---- fraud-detection: 12k ---- */
    {S_FRAUD_DETECTION, GEN_INFO, 1500,
     "Consumed record with orderId: {oid}, and updated total count to: {n}", NULL},
    {S_FRAUD_DETECTION, GEN_WARN, 4000, "order {oid} failed fraud check (score {n})", NULL},
    {S_FRAUD_DETECTION, GEN_INFO, 6500, "fraud check passed for {oid}, score {n}", NULL},

    /* ---- accounting: 12k ---- */
    {S_ACCOUNTING, GEN_INFO, 3800, "Order details: {oid} items={qty} total={amt} {cur}", NULL},
    {S_ACCOUNTING, GEN_INFO, 8200, "Persisted ledger entry {uuid} for {amt} {cur}", NULL},

    /* ---- kafka: 6k ---- */
    {S_KAFKA, GEN_WARN, 1500,
     "[Consumer clientId=consumer-fraud-detection-1, groupId=fraud-detection] Error while "
     "fetching metadata with correlation id {n} : {orders=LEADER_NOT_AVAILABLE}",
     NULL},
    {S_KAFKA, GEN_INFO, 3000,
     "\x1b[32m[Controller id=1]\x1b[0m Processed {n} records from partition __consumer_offsets-{d}",
     NULL},
    {S_KAFKA, GEN_TRACE, 1500, "[ReplicaFetcher replicaId=1] fetched {n} bytes\tlag={d}", NULL},

    /* ---- frontend-proxy: 90k ---- */
    {S_FRONTEND_PROXY, GEN_INFO, 13850,
     "[{isots}] \"POST {proute} HTTP/1.1\" {status} - via_upstream - \"-\" {n} {n} {ms} {ms} "
     "\"-\" \"{ua}\" \"{uuid}\" \"frontend-proxy:8080\" \"{ip}:8080\" frontend",
     PROXY_ATTRS("POST", "{proute}")},
    {S_FRONTEND_PROXY, GEN_INFO, 76150,
     "[{isots}] \"GET {groute} HTTP/1.1\" {status} - via_upstream - \"-\" 0 {n} {ms} {ms} \"-\" "
     "\"{ua}\" \"{uuid}\" \"frontend-proxy:8080\" \"{ip}:8080\" frontend",
     PROXY_ATTRS("GET", "{groute}")},

    /* ---- image-provider: 5k ---- */
    {S_IMAGE_PROVIDER, GEN_INFO, 4000,
     "{ip} - - \"GET /images/products/{img}.jpg HTTP/1.1\" {status} {n} \"-\" \"{ua}\"", NULL},
    {S_IMAGE_PROVIDER, GEN_ERROR, 1000,
     "open() \"/static/images/products/{img}.jpg\" failed (2: No such file or directory)", NULL},

    /* ---- load-generator: 40k ---- */
    {S_LOAD_GENERATOR, GEN_INFO, 26150, "GET {groute} {status} {ms}ms", NULL},
    {S_LOAD_GENERATOR, GEN_INFO, 5000, "GET /api/recommendations failed: 503 Service Unavailable",
     NULL},
    {S_LOAD_GENERATOR, GEN_INFO, 3850, "checkout of order {oid} failed: HTTP 500",
     "{\"locust.user\":\"WebsiteUser\",\"app.order.id\":\"{oid}\"}"},
    {S_LOAD_GENERATOR, GEN_ERROR, 3500, "error: HTTP 503 from /api/cart after {ms}ms", NULL},
    {S_LOAD_GENERATOR, GEN_DEBUG, 1500, "matched route pattern ^/api/products/\\w+$ for {pid}",
     NULL},
};
const size_t gen_ntemplates = sizeof gen_templates / sizeof gen_templates[0];
