#!/usr/bin/env bash
# Body of `npm run test:woocommerce`: runs real WordPress + WooCommerce + WooCommerce Subscriptions (PHP CLI) next
# to the service on the local MariaDB. Prepares PHP and the release trees, then runs the ava suite in
# dist/test/woocommerce (compiled by `npm run build` first, see package.json).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
releases="${WOOCOMMERCE_RELEASES:-$repo/../shared/woocommerce}"
cache="${SIDECAR_WC_CACHE:-${TMPDIR:-/tmp}/shop-sidecar-woocommerce}"

fail() { echo "test:woocommerce: $*" >&2; exit 1; }

# The release files, current stack then older stack. A missing one is a failure, never a silent pass.
wp_deb=wordpress_6.8.7+dfsg1-0+deb13u1_all.deb
needed=("$wp_deb" woocommerce-10.0.2.tar.gz woocommerce-subscriptions-7.9.0.tar.gz
        woocommerce-7.9.0.tar.gz woocommerce-subscriptions-6.3.2.tar.gz
        reepay-checkout-gateway-1.8.15.2.tar.gz woo-vipps-6.0.5.tar.gz)
[ -d "$releases" ] || fail "release folder $releases is missing (set WOOCOMMERCE_RELEASES to the folder with the WordPress/WooCommerce release files)"
for f in "${needed[@]}"; do
  [ -f "$releases/$f" ] || fail "release file $releases/$f is missing"
done

# PHP (CI machines start without it) and Debian 12's own WordPress 6.1 package for the older stack.
# Run as root on CI; elsewhere sudo is used when there.
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
php_modules_ok() {
  command -v php >/dev/null 2>&1 || return 1
  # Read the list once: `php -m | grep -q` under pipefail fails at random (grep -q closes the pipe early).
  local modules m; modules="$(php -m)"
  for m in mysqli curl dom mbstring intl zip gd bcmath; do grep -qix "$m" <<<"$modules" || return 1; done
}
apt_updated=
apt_install() {
  [ -n "$apt_updated" ] || { as_root apt-get update -qq; apt_updated=1; }
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
if ! php_modules_ok; then
  echo "test:woocommerce: installing PHP packages"
  apt_install php-cli php-mysql php-curl php-xml php-mbstring php-intl php-zip php-gd php-bcmath
  php_modules_ok || fail "PHP or one of its modules is still missing after apt-get install"
fi
older_wp=/usr/share/wordpress
if [ ! -f "$older_wp/wp-settings.php" ]; then
  echo "test:woocommerce: installing Debian's wordpress package (older stack)"
  apt_install wordpress
  [ -f "$older_wp/wp-settings.php" ] || fail "$older_wp/wp-settings.php is missing after apt-get install wordpress"
fi
grep -q "wp_version = '6.1." "$older_wp/wp-includes/version.php" ||
  echo "test:woocommerce: warning: $older_wp is not WordPress 6.1 ($(grep -o "wp_version = '[^']*'" "$older_wp/wp-includes/version.php"))" >&2

# A real browser and nginx for the WP admin tests (support/admin-browser.ts drives Debian's chromium with
# playwright-core; support/admin-origin.ts runs its own nginx processes on free ports, with their own
# configuration). Installing nginx must not start the package's own service on port 80: while it is installed, a
# policy-rc.d (unless the machine has one, as Docker images do) tells the maintainer scripts not to start services.
without_service_starts() {
  local policy=/usr/sbin/policy-rc.d rc=0
  if [ -e "$policy" ]; then "$@"; return; fi
  as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
  "$@" || rc=$?
  as_root rm -f "$policy"
  return "$rc"
}
browser_packages=()
[ -x /usr/bin/chromium ] || browser_packages+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || browser_packages+=(nginx)
command -v openssl >/dev/null 2>&1 || browser_packages+=(openssl)
if [ ${#browser_packages[@]} -gt 0 ]; then
  echo "test:woocommerce: installing ${browser_packages[*]} (WP admin browser tests)"
  without_service_starts apt_install "${browser_packages[@]}"
  [ -x /usr/bin/chromium ] || fail "/usr/bin/chromium is missing after apt-get install chromium"
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$nginx_bin" ] || fail "nginx is missing after apt-get install nginx"
command -v openssl >/dev/null 2>&1 || fail "openssl is missing after apt-get install openssl"

# Each release is unpacked once into the cache, in a folder named by the file's checksum, so a changed file is
# unpacked again and an unchanged one is reused across runs. A `.complete` marker guards against a half-unpacked
# folder left by an interrupted run.
mkdir -p "$cache/releases"
unpack() { # file -> prints the folder it was unpacked into
  local file="$releases/$1" name="${1%.tar.gz}" sum dir
  name="${name%.deb}"
  sum="$(sha256sum "$file" | cut -c1-16)"
  dir="$cache/releases/$name-$sum"
  if [ ! -f "$dir/.complete" ]; then
    rm -rf "$dir" "$dir.tmp"; mkdir -p "$dir.tmp"
    case "$1" in
      *.deb) dpkg-deb -x "$file" "$dir.tmp" ;;
      *) tar -xzf "$file" -C "$dir.tmp" ;;
    esac
    mv "$dir.tmp" "$dir"; touch "$dir/.complete"
  fi
  echo "$dir"
}
current_wp="$(unpack "$wp_deb")/usr/share/wordpress"
current_wc="$(unpack woocommerce-10.0.2.tar.gz)/woocommerce"
current_wcs="$(unpack woocommerce-subscriptions-7.9.0.tar.gz)/woocommerce-subscriptions"
older_wc="$(unpack woocommerce-7.9.0.tar.gz)/woocommerce"
older_wcs="$(unpack woocommerce-subscriptions-6.3.2.tar.gz)/woocommerce-subscriptions"
# The providers' own WooCommerce plugins (the card gateway's and the wallet's), active only in the shops of the
# tests that run them (provider-plugins-hpos.test.ts, provider-plugins-posts.test.ts).
card_plugin="$(unpack reepay-checkout-gateway-1.8.15.2.tar.gz)/reepay-checkout-gateway"
wallet_plugin="$(unpack woo-vipps-6.0.5.tar.gz)/woo-vipps"
for d in "$current_wp" "$current_wc" "$current_wcs" "$older_wc" "$older_wcs" "$card_plugin" "$wallet_plugin"; do
  [ -d "$d" ] || fail "unpacked release folder $d is missing (unexpected archive layout)"
done

# WooCommerce 7.9.0's class map names src/Caching/WPCacheEngine.php but the file is WpCacheEngine.php: on a
# case-sensitive file system switching the storage option fatals (woocommerce/woocommerce#44863). The copy under
# the second name is made in the cache copy only.
for wc in "$older_wc" "$current_wc"; do
  if [ -f "$wc/src/Caching/WpCacheEngine.php" ] && [ ! -e "$wc/src/Caching/WPCacheEngine.php" ]; then
    cp "$wc/src/Caching/WpCacheEngine.php" "$wc/src/Caching/WPCacheEngine.php"
  fi
done

# The card plugin's main file includes vendor/autoload.php, which its git tree does not hold: composer.json maps
# only its own namespace (PSR-4 `Reepay\Checkout\` -> includes/, no runtime packages). That autoloader is written
# into the cache copy here; the plugin's own files are not changed.
if [ ! -f "$card_plugin/vendor/autoload.php" ]; then
  grep -q '"Reepay\\\\Checkout\\\\": "includes/"' "$card_plugin/composer.json" ||
    fail "$card_plugin/composer.json no longer maps Reepay\\Checkout\\ to includes/: check the autoloader written here"
  mkdir -p "$card_plugin/vendor"
  cat > "$card_plugin/vendor/autoload.php.tmp" <<'PHP'
<?php
// Written by test/woocommerce/run.sh: the PSR-4 map of the plugin's composer.json (Reepay\Checkout\ -> includes/).
spl_autoload_register(
	static function ( $class ) {
		$prefix = 'Reepay\\Checkout\\';
		if ( 0 !== strncmp( $class, $prefix, strlen( $prefix ) ) ) {
			return;
		}
		$file = dirname( __DIR__ ) . '/includes/' . str_replace( '\\', '/', substr( $class, strlen( $prefix ) ) ) . '.php';
		if ( is_file( $file ) ) {
			require $file;
		}
	}
);
PHP
  mv "$card_plugin/vendor/autoload.php.tmp" "$card_plugin/vendor/autoload.php"
fi

export SIDECAR_WC_CACHE="$cache"
export SIDECAR_WC_PHP_DIR="$repo/test/woocommerce/php"
export SIDECAR_WP_CURRENT="$current_wp" SIDECAR_WC_CURRENT="$current_wc" SIDECAR_WCS_CURRENT="$current_wcs"
export SIDECAR_NGINX="$nginx_bin" SIDECAR_CHROMIUM="${SIDECAR_CHROMIUM:-/usr/bin/chromium}"
export SIDECAR_CARD_PLUGIN="$card_plugin" SIDECAR_WALLET_PLUGIN="$wallet_plugin"
export SIDECAR_WP_OLDER="$older_wp" SIDECAR_WC_OLDER="$older_wc" SIDECAR_WCS_OLDER="$older_wcs"

cd "$repo"
exec npx ava --config ava.woocommerce.config.cjs "$@"
