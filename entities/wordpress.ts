import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

// WordPress core tables as wp-admin/includes/schema.php creates them, with their real columns and index
// names. Table names are given without the site's `$table_prefix`; the data source's naming strategy adds
// DB_TABLE_PREFIX. Columns are typed explicitly so the entities load the same under tsc and any runner
// without decorator metadata. Index prefix lengths (`meta_key(191)`) are WordPress's and not repeated here:
// the service never creates these tables, and names an index only to hint it.

@Entity({ name: 'posts', synchronize: false })
@Index('post_name', ['slug'])
@Index('type_status_date', ['type', 'status', 'dateLocal', 'id'])
@Index('post_parent', ['parentId'])
@Index('post_author', ['author'])
export class Post {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'ID' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'post_author', default: 0 }) author!: string;
  @Column({ type: 'datetime', name: 'post_date' }) dateLocal!: string;
  @Column({ type: 'datetime', name: 'post_date_gmt' }) dateGmt!: string;
  @Column({ type: 'longtext', name: 'post_content' }) content!: string;
  @Column({ type: 'text', name: 'post_title' }) title!: string;
  @Column({ type: 'text', name: 'post_excerpt' }) excerpt!: string;
  @Column({ type: 'varchar', length: 20, name: 'post_status', default: 'publish' }) status!: string;
  @Column({ type: 'varchar', length: 20, name: 'comment_status', default: 'open' }) commentStatus!: string;
  @Column({ type: 'varchar', length: 20, name: 'ping_status', default: 'open' }) pingStatus!: string;
  @Column({ type: 'varchar', length: 255, name: 'post_password', default: '' }) password!: string;
  @Column({ type: 'varchar', length: 200, name: 'post_name', default: '' }) slug!: string;
  @Column({ type: 'text', name: 'to_ping' }) toPing!: string;
  @Column({ type: 'text', name: 'pinged' }) pinged!: string;
  @Column({ type: 'datetime', name: 'post_modified' }) modifiedLocal!: string;
  @Column({ type: 'datetime', name: 'post_modified_gmt' }) modifiedGmt!: string;
  @Column({ type: 'longtext', name: 'post_content_filtered' }) contentFiltered!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'post_parent', default: 0 }) parentId!: string;
  @Column({ type: 'varchar', length: 255, name: 'guid', default: '' }) guid!: string;
  @Column({ type: 'int', name: 'menu_order', default: 0 }) menuOrder!: number;
  @Column({ type: 'varchar', length: 20, name: 'post_type', default: 'post' }) type!: string;
  @Column({ type: 'varchar', length: 100, name: 'post_mime_type', default: '' }) mimeType!: string;
  @Column({ type: 'bigint', name: 'comment_count', default: 0 }) commentCount!: string;
}

@Entity({ name: 'postmeta', synchronize: false })
@Index('post_id', ['postId'])
@Index('meta_key', ['key'])
export class PostMeta {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'meta_id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'post_id', default: 0 }) postId!: string;
  @Column({ type: 'varchar', length: 255, name: 'meta_key', nullable: true }) key!: string | null;
  @Column({ type: 'longtext', name: 'meta_value', nullable: true }) value!: string | null;
}

@Entity({ name: 'options', synchronize: false })
@Index('option_name', ['name'], { unique: true })
@Index('autoload', ['autoload'])
export class WpOption {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'option_id' }) id!: string;
  @Column({ type: 'varchar', length: 191, name: 'option_name', default: '' }) name!: string;
  @Column({ type: 'longtext', name: 'option_value' }) value!: string;
  @Column({ type: 'varchar', length: 20, name: 'autoload', default: 'yes' }) autoload!: string;
}

@Entity({ name: 'users', synchronize: false })
@Index('user_login_key', ['login'])
@Index('user_nicename', ['nicename'])
@Index('user_email', ['email'])
export class WpUser {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'ID' }) id!: string;
  @Column({ type: 'varchar', length: 60, name: 'user_login', default: '' }) login!: string;
  @Column({ type: 'varchar', length: 255, name: 'user_pass', default: '' }) passwordHash!: string;
  @Column({ type: 'varchar', length: 50, name: 'user_nicename', default: '' }) nicename!: string;
  @Column({ type: 'varchar', length: 100, name: 'user_email', default: '' }) email!: string;
  @Column({ type: 'varchar', length: 100, name: 'user_url', default: '' }) url!: string;
  @Column({ type: 'datetime', name: 'user_registered' }) registeredGmt!: string;
  @Column({ type: 'varchar', length: 255, name: 'user_activation_key', default: '' }) activationKey!: string;
  @Column({ type: 'int', name: 'user_status', default: 0 }) userStatus!: number;
  @Column({ type: 'varchar', length: 250, name: 'display_name', default: '' }) displayName!: string;
}

@Entity({ name: 'usermeta', synchronize: false })
@Index('user_id', ['userId'])
@Index('meta_key', ['key'])
export class WpUserMeta {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'umeta_id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'user_id', default: 0 }) userId!: string;
  @Column({ type: 'varchar', length: 255, name: 'meta_key', nullable: true }) key!: string | null;
  @Column({ type: 'longtext', name: 'meta_value', nullable: true }) value!: string | null;
}

/** WooCommerce keeps order notes as comments of type `order_note` on the order's ID, in both storage modes. */
@Entity({ name: 'comments', synchronize: false })
@Index('comment_post_ID', ['postId'])
@Index('comment_approved_date_gmt', ['approved', 'dateGmt'])
@Index('comment_date_gmt', ['dateGmt'])
@Index('comment_parent', ['parentId'])
@Index('comment_author_email', ['authorEmail'])
export class WpComment {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'comment_ID' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'comment_post_ID', default: 0 }) postId!: string;
  @Column({ type: 'tinytext', name: 'comment_author' }) author!: string;
  @Column({ type: 'varchar', length: 100, name: 'comment_author_email', default: '' }) authorEmail!: string;
  @Column({ type: 'varchar', length: 200, name: 'comment_author_url', default: '' }) authorUrl!: string;
  @Column({ type: 'varchar', length: 100, name: 'comment_author_IP', default: '' }) authorIp!: string;
  @Column({ type: 'datetime', name: 'comment_date' }) dateLocal!: string;
  @Column({ type: 'datetime', name: 'comment_date_gmt' }) dateGmt!: string;
  @Column({ type: 'text', name: 'comment_content' }) content!: string;
  @Column({ type: 'int', name: 'comment_karma', default: 0 }) karma!: number;
  @Column({ type: 'varchar', length: 20, name: 'comment_approved', default: '1' }) approved!: string;
  @Column({ type: 'varchar', length: 255, name: 'comment_agent', default: '' }) agent!: string;
  @Column({ type: 'varchar', length: 20, name: 'comment_type', default: 'comment' }) type!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'comment_parent', default: 0 }) parentId!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'user_id', default: 0 }) userId!: string;
}

@Entity({ name: 'commentmeta', synchronize: false })
@Index('comment_id', ['commentId'])
@Index('meta_key', ['key'])
export class WpCommentMeta {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true, name: 'meta_id' }) id!: string;
  @Column({ type: 'bigint', unsigned: true, name: 'comment_id', default: 0 }) commentId!: string;
  @Column({ type: 'varchar', length: 255, name: 'meta_key', nullable: true }) key!: string | null;
  @Column({ type: 'longtext', name: 'meta_value', nullable: true }) value!: string | null;
}
